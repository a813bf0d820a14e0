package providers

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// ObservationID derives the provider event ID of an observed-status fact
// from what was observed (payment ID, status, status detail, refunded
// amount, provider's last-updated time, …), so fetching the same state twice
// yields the same ID and the store keeps it once, while any change of state
// is a new fact. The parts are joined with a separator that cannot occur in
// them unescaped, so ("a","bc") and ("ab","c") differ.
func ObservationID(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strings.ReplaceAll(p, "\x1f", "\x1f\x1f")))
		h.Write([]byte{0x1f, 0x1e})
	}
	return "obs_" + hex.EncodeToString(h.Sum(nil)[:16])
}
