package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// ObservationID derives the provider event ID of an observed-status fact from
// what was observed (payment ID, status, amounts, last-updated time, …), so
// the same state fetched twice is stored once and any change is a new fact.
// Parts are joined unambiguously: ("a","bc") and ("ab","c") differ.
func ObservationID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strings.ReplaceAll(p, "\x1f", "\x1f\x1f")))
		h.Write([]byte{0x1f, 0x1e})
	}
	return "obs_" + hex.EncodeToString(h.Sum(nil)[:16])
}
