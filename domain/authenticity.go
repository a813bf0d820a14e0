package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// AuthResult is the outcome of re-verifying a stored delivery now, with the
// configured secrets or the kept key, for authenticity only: the replay
// tolerance is about delivery time and does not apply (issue 19, evidence).
type AuthResult string

// The four results of re-verification. They are wire values of the evidence
// route: never rename one.
const (
	// AuthVerified: the first configured secret (or the kept key) matches.
	AuthVerified AuthResult = "verified"
	// AuthVerifiedRotated: a configured secret other than the first matches.
	AuthVerifiedRotated AuthResult = "verified_with_rotated_secret"
	// AuthUnverifiable: nothing configured or kept can check it; Reason says why.
	AuthUnverifiable AuthResult = "unverifiable"
	// AuthFailed: a configured secret or the kept key should match and none does.
	AuthFailed AuthResult = "failed"
)

// Valid reports whether r is one of the four results.
func (r AuthResult) Valid() bool {
	switch r {
	case AuthVerified, AuthVerifiedRotated, AuthUnverifiable, AuthFailed:
		return true
	}
	return false
}

// Authenticity is a re-verification of one stored delivery. It never holds a
// secret: SecretID is a SecretFingerprint.
type Authenticity struct {
	Result AuthResult `json:"result"`
	// Reason explains the result in a sentence; always set unless verified
	// by the first secret.
	Reason string `json:"reason,omitempty"`
	// SecretID is the fingerprint of the configured secret that matched now
	// (verified results), or of the one recorded at receipt (failed).
	SecretID string `json:"secret_id,omitempty"`
	// KeyID is the kid of the asymmetric key that checked the signature.
	KeyID string `json:"key_id,omitempty"`
}

// AuthProof is what ingest records about how a delivery was verified, so
// that evidence can later tell a rotated secret from an altered body. The
// zero value is a fact recorded before proofs existed (or a scheme, like a
// static token, that has nothing to prove).
type AuthProof struct {
	// Scheme names the signature scheme that verified the delivery, e.g.
	// "stripe-v1" or "pagarme-rs256"; providers define their values.
	Scheme string `json:"scheme,omitempty"`
	// SecretID is the SecretFingerprint of the HMAC secret that matched.
	SecretID string `json:"secret_id,omitempty"`
	// KeyID is the kid of the asymmetric key that verified the signature.
	KeyID string `json:"key_id,omitempty"`
	// Key is that public key as a JWK, kept so the proof survives rotation.
	Key json.RawMessage `json:"key,omitempty"`
}

// IsZero reports whether p records nothing (a legacy fact).
func (p AuthProof) IsZero() bool {
	return p.Scheme == "" && p.SecretID == "" && p.KeyID == "" && len(p.Key) == 0
}

// secretIDDomain separates secret fingerprints from any other SHA-256 of the
// same bytes, so a fingerprint cannot be replayed as some other digest.
const secretIDDomain = "payledger secret id v1\x00"

// SecretFingerprint names secret without revealing it: "sha256:" and the
// first 16 hex digits of SHA-256 over a domain-separated string. 64 bits tell
// a handful of configured secrets apart; secrets are high-entropy keys, so
// the prefix does not help guess one.
func SecretFingerprint(secret string) string {
	sum := sha256.Sum256([]byte(secretIDDomain + secret))
	return "sha256:" + hex.EncodeToString(sum[:8])
}
