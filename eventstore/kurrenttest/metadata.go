package kurrenttest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"
)

// streamMeta is the part of a stream's metadata the server enforces on reads.
// Absent keys are nil.
type streamMeta struct {
	maxCount *int64
	maxAge   *int64 // seconds
	tb       *int64 // truncate before
}

// metastreamMeta is what every metastream gets: only its latest event is
// visible (ESConsts.MetaStreamMaxCount).
var metastreamMeta = streamMeta{maxCount: ptr(int64(1))}

func ptr[T any](v T) *T { return &v }

// meta returns name's metadata: the latest event of its metastream when that
// is non-empty JSON, else none. Call with mu held.
func (st *store) meta(name string) streamMeta {
	if _, ok := originalOf(name); ok {
		return metastreamMeta
	}
	r := st.lastMetaEvent(name)
	if r == nil || len(r.data) == 0 || !r.json {
		return streamMeta{}
	}
	return parseMeta(r.data)
}

// lastMetaEvent is the latest event of name's metastream. Call with mu held.
func (st *store) lastMetaEvent(name string) *record {
	s := st.streams[metastreamOf(name)]
	if s == nil || len(s.events) == 0 {
		return nil
	}
	return s.events[len(s.events)-1]
}

// softDeleted reports whether Delete has hidden name ($tb = DeletedStream)
// and no append has recreated it yet. Call with mu held.
func (st *store) softDeleted(name string) bool {
	tb := st.meta(name).tb
	return tb != nil && *tb == deletedStream
}

func parseMeta(data []byte) streamMeta {
	var raw map[string]json.RawMessage
	if json.Unmarshal(data, &raw) != nil {
		return streamMeta{}
	}
	return streamMeta{maxCount: metaInt(raw["$maxCount"]), maxAge: metaInt(raw["$maxAge"]), tb: metaInt(raw["$tb"])}
}

func metaInt(raw json.RawMessage) *int64 {
	if raw == nil {
		return nil
	}
	v, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return nil
	}
	return &v
}

// minVisible is the lowest event number reads may return: max($tb,
// last-$maxCount+1).
func (m streamMeta) minVisible(last int64) int64 {
	lo := int64(0)
	if m.maxCount != nil {
		lo = max(lo, last-*m.maxCount+1)
	}
	if m.tb != nil {
		lo = max(lo, *m.tb)
	}
	return lo
}

// fresh reports whether r is young enough for $maxAge.
func (m streamMeta) fresh(r *record, now time.Time) bool {
	if m.maxAge == nil {
		return true
	}
	return r.created >= ticks(now.Add(-time.Duration(*m.maxAge)*time.Second))
}

// visible returns the event at number as a read sees it, or nil when the
// stream is missing, deleted, or metadata hides the event (ReadEvent).
// Call with mu held.
func (st *store) visible(name string, number int64) *record {
	last := st.lastNumber(name)
	m := st.meta(name)
	if last < 0 || last == deletedStream || m.tb != nil && *m.tb == deletedStream {
		return nil
	}
	if number < m.minVisible(last) || number > last {
		return nil
	}
	r := st.event(name, number)
	if r == nil || !m.fresh(r, st.now()) {
		return nil
	}
	return r
}

// setTruncateBefore returns the metadata JSON object raw with "$tb" set to
// tb, keeping the other keys in order, as the server's soft undelete does.
// It reports false when raw is not a JSON object.
func setTruncateBefore(raw []byte, tb int64) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	var out bytes.Buffer
	out.WriteByte('{')
	seen := false
	for dec.More() {
		k, err := dec.Token()
		key, ok := k.(string)
		var v json.RawMessage
		if err != nil || !ok || dec.Decode(&v) != nil {
			return nil, false
		}
		if key == "$tb" {
			v, seen = json.RawMessage(strconv.FormatInt(tb, 10)), true
		}
		writeMember(&out, key, v)
	}
	if !seen {
		writeMember(&out, "$tb", json.RawMessage(strconv.FormatInt(tb, 10)))
	}
	out.WriteByte('}')
	return out.Bytes(), true
}

func writeMember(out *bytes.Buffer, key string, v json.RawMessage) {
	if out.Len() > 1 {
		out.WriteByte(',')
	}
	k, _ := json.Marshal(key)
	out.Write(k)
	out.WriteByte(':')
	_ = json.Compact(out, v)
}
