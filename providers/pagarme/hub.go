package pagarme

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"strings"

	"github.com/payledger/payledger/domain"
)

// hubAlgorithm is the only algorithm of the legacy scheme we accept.
// pagarme-ruby takes the algorithm from the header; Pagar.me only ever
// sends sha1, and accepting others would let a sender pick a weaker one.
const hubAlgorithm = "sha1"

// ParseHubHeader parses a legacy X-Hub-Signature value "sha1=<hex>" as
// pagarme-ruby does (split on the first '=', spaces ignored, case-insensitive)
// and returns the 20-byte MAC. The error is KindInvalid wrapping ErrNotSigned,
// ErrInvalidHeader or ErrUnsupportedAlgorithm.
func ParseHubHeader(h string) ([]byte, error) {
	return parseHubHeader("pagarme: parse "+HeaderHub, h)
}

func parseHubHeader(op, h string) ([]byte, error) {
	h = strings.TrimSpace(h)
	if h == "" {
		return nil, domain.Invalid(op, "missing "+HeaderHub+" header", ErrNotSigned)
	}
	alg, value, ok := strings.Cut(h, "=")
	if !ok {
		return nil, domain.Invalid(op, "malformed "+HeaderHub+" header: not algorithm=hex", ErrInvalidHeader)
	}
	if !strings.EqualFold(strings.TrimSpace(alg), hubAlgorithm) {
		return nil, domain.Invalid(op, HeaderHub+" algorithm "+quote(alg)+" is not supported (only sha1)", ErrUnsupportedAlgorithm)
	}
	mac, err := hex.DecodeString(strings.TrimSpace(value))
	if err != nil || len(mac) != sha1.Size {
		return nil, domain.Invalid(op, "malformed "+HeaderHub+" header: the MAC is not 40 hex digits", ErrInvalidHeader)
	}
	return mac, nil
}

// verifyHub checks a legacy HMAC-SHA1 against every configured secret and
// names the first that matched.
func (p *Provider) verifyHub(value string, body []byte) (verified, error) {
	mac, err := parseHubHeader(opVerify, value)
	if err != nil {
		return verified{}, err
	}
	i := p.matchHub(mac, body)
	if i < 0 {
		return verified{}, domain.Invalid(opVerify, HeaderHub+" does not match a configured secret", ErrNoValidSignature)
	}
	return verified{secret: i}, nil
}

// matchHub returns the index of the first configured secret whose HMAC of
// body is mac, or -1.
func (p *Provider) matchHub(mac, body []byte) int {
	for i, secret := range p.secrets {
		if hmac.Equal(hubMAC(secret, body), mac) { // constant time
			return i
		}
	}
	return -1
}

// SignHub returns an X-Hub-Signature value for body under secret, as
// Pagar.me's legacy scheme sends it: "sha1=<lower-case hex HMAC-SHA1>".
// Tests, the simulator and the docs use it.
func SignHub(body []byte, secret string) string {
	return hubAlgorithm + "=" + hex.EncodeToString(hubMAC([]byte(secret), body))
}

// hubMAC is HMAC-SHA1 keyed with the secret's bytes over the raw body.
func hubMAC(secret, body []byte) []byte {
	m := hmac.New(sha1.New, secret)
	m.Write(body)
	return m.Sum(nil)
}
