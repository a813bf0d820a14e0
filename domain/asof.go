package domain

import "time"

// AsOf is a view of a payment at a moment on one axis: on BasisEffective
// the facts whose provider time is at or before At (the truth about that
// moment as known now, late facts included), on BasisRecorded the facts the
// store held by At (what payledger believed then). The domain has no clock:
// the caller names the moment.
type AsOf struct {
	At    time.Time
	Basis Basis
}

// Folds reports whether the view folds arrival a.
func (v AsOf) Folds(a Arrival) bool {
	if v.Basis == BasisRecorded {
		return !a.RecordedAt.After(v.At)
	}
	return a.Event != nil && !a.Event.EventMeta().OccurredAt.After(v.At)
}

// Holds reports whether the view holds a journal entry that is effective
// at effective and was recorded at recorded. Entries are never edited, so
// those held are the books as of the moment on the axis (see Journal).
func (v AsOf) Holds(effective, recorded time.Time) bool {
	if v.Basis == BasisRecorded {
		return !recorded.After(v.At)
	}
	return !effective.After(v.At)
}

// Filter returns the arrivals the view folds, in their order.
func (v AsOf) Filter(arrivals []Arrival) []Arrival {
	out := make([]Arrival, 0, len(arrivals))
	for _, a := range arrivals {
		if v.Folds(a) {
			out = append(out, a)
		}
	}
	return out
}
