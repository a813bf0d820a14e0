package kurrenttest

// readStatus is how a stream read ended before returning events.
type readStatus int

const (
	statusOK readStatus = iota
	statusNoStream
	statusDeleted
)

// streamStatus reports whether name can be read: tombstoned streams fail,
// missing and soft-deleted ones read as not found. Call with mu held.
func (st *store) streamStatus(name string) (last int64, m streamMeta, s readStatus) {
	last = st.lastNumber(name)
	if last == deletedStream {
		return last, m, statusDeleted
	}
	m = st.meta(name)
	if last < 0 || m.tb != nil && *m.tb == deletedStream {
		return last, m, statusNoStream
	}
	return last, m, statusOK
}

// readForward returns up to count visible events numbered from on, and
// whether it reached the end of the stream. Metadata applies: $tb,
// $maxCount and $maxAge hide events. Call with mu held.
func (st *store) readForward(name string, from int64, count int) ([]*record, bool, readStatus) {
	last, m, s := st.streamStatus(name)
	if s != statusOK {
		return nil, true, s
	}
	now := st.now()
	var page []*record
	n := max(from, m.minVisible(last))
	for ; n <= last && len(page) < count; n++ {
		if r := st.event(name, n); m.fresh(r, now) {
			page = append(page, r)
		}
	}
	return page, n > last, statusOK
}

// readBackward returns up to count visible events numbered from (or the
// last, when from is negative or past it) downwards. Call with mu held.
func (st *store) readBackward(name string, from int64, count int) ([]*record, readStatus) {
	last, m, s := st.streamStatus(name)
	if s != statusOK {
		return nil, s
	}
	if from < 0 || from > last {
		from = last
	}
	now := st.now()
	var page []*record
	for n := from; n >= m.minVisible(last) && len(page) < count; n-- {
		if r := st.event(name, n); m.fresh(r, now) {
			page = append(page, r)
		}
	}
	return page, statusOK
}
