package kurrenttest

import "github.com/google/uuid"

// expectKind is the expected-revision condition of a write.
type expectKind int

const (
	expectAny expectKind = iota
	expectNoStream
	expectStreamExists
	expectExact
)

// expected is an expected revision as the server numbers it.
type expected struct {
	kind expectKind
	rev  int64 // for expectExact
}

// version is the server's numeric form: Any -2, NoStream -1, StreamExists -4,
// or the revision.
func (e expected) version() int64 {
	switch e.kind {
	case expectAny:
		return -2
	case expectNoStream:
		return -1
	case expectStreamExists:
		return -4
	}
	return e.rev
}

// verdict is the outcome of the commit check (CommitDecision).
type verdict int

const (
	verdictOK verdict = iota
	verdictIdempotent
	verdictWrongVersion // also CorruptedIdempotency, which the wire reports the same way
	verdictDeleted
)

// decision is what the commit check found.
type decision struct {
	verdict verdict
	current int64 // the stream's last event number when checked
	// last is the event number an idempotent write reports (its last id's).
	last int64
	// softDeleted: an OK write must recreate the soft-deleted stream.
	softDeleted bool
}

// check applies IndexWriter.CheckCommit (v24.10) to a write of ids to name.
// Call with mu held.
func (st *store) check(name string, exp expected, ids []uuid.UUID) decision {
	cur := st.lastNumber(name)
	d := decision{current: cur}
	if cur == deletedStream {
		d.verdict = verdictDeleted
		return d
	}
	switch exp.kind {
	case expectStreamExists:
		if st.softDeleted(name) {
			d.verdict = verdictDeleted
			return d
		}
		if cur < 0 && st.lastNumber(metastreamOf(name)) < 0 {
			d.verdict = verdictWrongVersion
			return d
		}
		return st.weakCheck(name, ids, d)
	case expectAny:
		return st.weakCheck(name, ids, d)
	}
	n := exp.version() // NoStream is -1
	switch {
	case n < cur:
		return st.strongCheck(name, exp, ids, d)
	case n > cur:
		d.verdict = verdictWrongVersion
	default: // the expected revision is the current one: written with no duplicate check at all
		d.softDeleted = st.softDeleted(name)
	}
	return d
}

// weakCheck is the Any/StreamExists rule: only the committed-events cache is
// consulted. An unknown first id means the whole batch is new.
func (st *store) weakCheck(name string, ids []uuid.UUID, d decision) decision {
	for i, id := range ids {
		e, ok := st.cache.get(id)
		if ok && e.stream == name {
			d.last = e.number
			continue
		}
		if i > 0 { // first id known, a later one not: CorruptedIdempotency
			d.verdict = verdictWrongVersion
			return d
		}
		d.softDeleted = st.softDeleted(name)
		return d
	}
	if len(ids) == 0 {
		d.softDeleted = st.softDeleted(name)
		return d
	}
	d.verdict = verdictIdempotent
	return d
}

// strongCheck is the NoStream/exact-revision rule when the stream has moved
// past the expected revision: the ids must sit at the following numbers,
// found in the cache or, failing that, in the stored events themselves.
func (st *store) strongCheck(name string, exp expected, ids []uuid.UUID, d decision) decision {
	number := exp.version()
	for i, id := range ids {
		number++
		if e, ok := st.cache.get(id); ok && e.stream == name && e.number == number {
			continue
		}
		if r := st.event(name, number); r != nil && r.id == id {
			continue
		}
		if i == 0 && exp.kind == expectNoStream && st.softDeleted(name) {
			d.softDeleted = true // NoStream recreates a soft-deleted stream
			return d
		}
		d.verdict = verdictWrongVersion
		return d
	}
	if len(ids) == 0 {
		d.verdict = verdictWrongVersion
		return d
	}
	d.verdict, d.last = verdictIdempotent, number
	return d
}
