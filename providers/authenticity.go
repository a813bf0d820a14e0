package providers

import (
	"errors"
	"slices"
	"strconv"

	"github.com/payledger/payledger/domain"
)

// Fingerprints returns the domain.SecretFingerprint of each secret, in order.
func Fingerprints(secrets [][]byte) []string {
	ids := make([]string, len(secrets))
	for i, s := range secrets {
		ids[i] = domain.SecretFingerprint(string(s))
	}
	return ids
}

// AuthenticateHMAC decides the re-verification of a delivery signed with a
// shared secret. ids are the fingerprints of the configured secrets, matched
// the index of the first that matches now (-1: none), and recorded the
// fingerprint kept at receipt ("" for facts from before proofs). Only the
// recorded fingerprint tells a rotated secret (unverifiable) from an altered
// delivery (failed): with HMAC both look like "no secret matches".
func AuthenticateHMAC(ids []string, matched int, recorded string) domain.Authenticity {
	switch {
	case matched == 0:
		return domain.Authenticity{Result: domain.AuthVerified, SecretID: ids[0]}
	case matched > 0:
		return domain.Authenticity{Result: domain.AuthVerifiedRotated, SecretID: ids[matched],
			Reason: "matched configured secret " + strconv.Itoa(matched+1) + " (" + ids[matched] + "), not the first"}
	case len(ids) == 0:
		return Unverifiable("no secret of this signature scheme is configured")
	case recorded == "":
		return Unverifiable("no configured secret matches, and the fact was recorded before payledger kept which secret " +
			"verified a delivery: for it a rotated secret cannot be told from an altered delivery")
	case slices.Contains(ids, recorded):
		return domain.Authenticity{Result: domain.AuthFailed, SecretID: recorded,
			Reason: "the secret that verified it at receipt, " + recorded + ", is still configured and does not match: " +
				"the stored delivery is not what was signed"}
	}
	return Unverifiable("the secret that verified it at receipt, " + recorded + ", is no longer configured")
}

// Unverifiable returns an unverifiable result with reason.
func Unverifiable(reason string) domain.Authenticity {
	return domain.Authenticity{Result: domain.AuthUnverifiable, Reason: reason}
}

// Failed returns a failed result with reason.
func Failed(reason string) domain.Authenticity {
	return domain.Authenticity{Result: domain.AuthFailed, Reason: reason}
}

// HeaderProblem is the result for a kept signature header that does not
// parse. Absent (ErrNotSigned) is unverifiable: the header was not kept, so
// nothing can be checked. Present but malformed is failed: ingest stores only
// deliveries whose header verified, so the stored one is not what arrived.
func HeaderProblem(header string, err error) domain.Authenticity {
	if errors.Is(err, ErrNotSigned) {
		return Unverifiable("the delivery's " + header + " header was not kept")
	}
	return Failed("the kept " + header + " header is not a valid signature header (" + err.Error() + ")")
}
