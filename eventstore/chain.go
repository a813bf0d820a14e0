package eventstore

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"time"
)

// chainVersion tags the encoding ChainHash hashes; a new encoding gets a new
// tag (and a new seed), so chains of two versions can never be confused.
const chainVersion = "payledger chain v1"

// ChainSeed is the hash the first event of every stream chains from:
// SHA-256 of the ASCII string "payledger chain v1".
var ChainSeed = sha256.Sum256([]byte(chainVersion))

// ChainHash is the hash of event e chained on prev, the hash of the event
// before it in its stream (ChainSeed for the first). It is SHA-256 over the
// version tag, prev, the event ID's 16 bytes, the stream name (UTF-8), the
// revision (8 bytes, big-endian), the type, and the data and metadata bytes
// exactly as a read of the store returns them, each as an 8-byte big-endian
// length followed by its bytes, so no two field lists encode alike. The
// store-assigned position and recorded time are not covered.
func ChainHash(prev [32]byte, e RecordedEvent) [32]byte {
	h := sha256.New()
	var rev [8]byte
	binary.BigEndian.PutUint64(rev[:], e.Revision)
	for _, field := range [][]byte{
		[]byte(chainVersion), prev[:], e.ID[:], []byte(e.Stream), rev[:],
		[]byte(e.Type), e.Data, e.Metadata,
	} {
		writeField(h, field)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// writeField writes b length-prefixed; a hash.Hash never fails to write.
func writeField(h hash.Hash, b []byte) {
	var n [8]byte
	binary.BigEndian.PutUint64(n[:], uint64(len(b)))
	h.Write(n[:])
	h.Write(b)
}

// Seal is the chain hash the sealer recorded for one stored event.
type Seal struct {
	Revision uint64
	EventID  [16]byte
	Hash     [32]byte
	SealedAt time.Time
	// Backfill: sealed by the backfill of events stored before the chain began.
	Backfill bool
}
