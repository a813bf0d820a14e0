package kurrentdb

import (
	"errors"
	"testing"
)

// TestBoxDiscardsLateResults: the first result is the answer; one that
// arrives after it, or after the caller took its answer (an abandoned call
// finishing late), is discarded, never written where the caller reads.
func TestBoxDiscardsLateResults(t *testing.T) {
	var discarded []int
	b := &box[int]{discard: func(v int) { discarded = append(discarded, v) }}
	b.put(1)
	b.put(2) // a second attempt that also answered
	if v, err := unbox(b, nil); v != 1 || err != nil {
		t.Fatalf("unbox = %d, %v; want 1", v, err)
	}
	b.put(3) // an abandoned call finishing after the caller returned
	if len(discarded) != 2 || discarded[0] != 2 || discarded[1] != 3 {
		t.Errorf("discarded %v, want [2 3]", discarded)
	}

	// A failed call whose abandoned attempt succeeded: the value is discarded.
	discarded = nil
	b = &box[int]{discard: func(v int) { discarded = append(discarded, v) }}
	b.put(7)
	if _, err := unbox(b, errors.New("unavailable")); err == nil || len(discarded) != 1 || discarded[0] != 7 {
		t.Errorf("unbox on error: err %v, discarded %v; want the error and [7]", err, discarded)
	}
}
