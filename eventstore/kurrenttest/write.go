package kurrenttest

import "github.com/google/uuid"

// write commits evs after an OK decision, then recreates soft-deleted
// streams the way StorageWriterService does after a write. It returns the
// last event number and the position of the last event (of the empty record
// for an empty write). Call with mu held.
func (st *store) write(name string, d decision, evs []proposed) (last, pos int64) {
	orig, isMeta := originalOf(name)
	undeleteOrig := isMeta && st.softDeleted(orig) // decided before the write, as the server does
	last = d.current
	if len(evs) == 0 {
		pos = st.skipEmpty()
	}
	for i, e := range evs {
		r := st.commit(name, d.current+1+int64(i), e)
		last, pos = r.number, r.pos
	}
	if d.softDeleted {
		st.undelete(name, d.current+1)
	}
	if undeleteOrig {
		st.undelete(orig, st.lastNumber(orig)+1)
	}
	st.notify()
	return last, pos
}

// undelete rewrites name's metadata with $tb = from, so events written
// before the soft delete stay hidden and the stream reads again.
// Call with mu held.
func (st *store) undelete(name string, from int64) {
	m := st.lastMetaEvent(name)
	if m == nil {
		return
	}
	raw, ok := setTruncateBefore(m.data, from)
	if !ok {
		return
	}
	meta := metastreamOf(name)
	st.commit(meta, st.lastNumber(meta)+1, proposed{id: uuid.New(), typ: "$metadata", json: true, data: raw})
}
