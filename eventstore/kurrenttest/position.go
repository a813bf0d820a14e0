package kurrenttest

import "math"

// tfpos is a transaction-file position as the server compares it: commit
// first, then prepare. -1 stands for the head of the log (HeadOfTf) and
// travels on the wire as 2^64-1.
type tfpos struct {
	commit, prepare int64
}

var headOfLog = tfpos{-1, -1}

func (r *record) position() tfpos { return tfpos{r.pos, r.pos} }

func (p tfpos) less(q tfpos) bool {
	return p.commit < q.commit || p.commit == q.commit && p.prepare < q.prepare
}

// wire converts p to the unsigned form of the protocol (Position.FromInt64).
func (p tfpos) wire() (commit, prepare uint64) {
	return wirePart(p.commit), wirePart(p.prepare)
}

func wirePart(v int64) uint64 {
	if v == -1 {
		return math.MaxUint64
	}
	return uint64(v)
}

// fromWire converts a client position; 2^64-1 (Position.End) maps to -1.
func fromWire(commit, prepare uint64) tfpos {
	return tfpos{signedPart(commit), signedPart(prepare)}
}

func signedPart(v uint64) int64 {
	if v > math.MaxInt64 {
		return -1
	}
	return int64(v)
}
