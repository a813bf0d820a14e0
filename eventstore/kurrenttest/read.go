package kurrenttest

import (
	"context"
	"math"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
)

// reader serves one Read call.
type reader struct {
	st         *store
	out        streams.Streams_ReadServer
	uuidString bool // the client asked for string UUIDs instead of structured ones
}

func (r *reader) send(rec *record) error { return r.out.Send(eventResp(rec, r.uuidString)) }

// Read implements Streams.Read: stream and $all reads in both directions,
// and stream, $all and filtered $all subscriptions.
func (s *streamsService) Read(req *streams.ReadReq, out streams.Streams_ReadServer) error {
	o := req.GetOptions()
	if o == nil {
		return errInvalid("options are required")
	}
	if o.GetUuidOption() == nil {
		return errInvalid("uuidOption is required")
	}
	_, asString := o.GetUuidOption().GetContent().(*streams.ReadReq_Options_UUIDOption_String_)
	r := &reader{st: s.st, out: out, uuidString: asString}
	ctx := out.Context()
	backwards := o.GetReadDirection() == streams.ReadReq_Options_Backwards
	_, subscribe := o.GetCountOption().(*streams.ReadReq_Options_Subscription)
	filter := o.GetFilter()
	if subscribe && backwards {
		return errInvalid("subscriptions read forwards only")
	}
	switch so := o.GetStreamOption().(type) {
	case *streams.ReadReq_Options_Stream:
		if filter != nil {
			return errInvalid("filters apply to $all only")
		}
		if subscribe {
			return r.subscribeStream(ctx, so.Stream)
		}
		return r.readStream(ctx, so.Stream, backwards, o.GetCount())
	case *streams.ReadReq_Options_All:
		var f *eventFilter
		if filter != nil {
			var err error
			if f, err = newFilter(filter); err != nil {
				return err
			}
		}
		if subscribe {
			return r.subscribeAll(ctx, so.All, f)
		}
		return r.readAll(so.All, backwards, o.GetCount(), f)
	}
	return errInvalid("a stream or $all is required")
}

// readStream answers a plain stream read: events, or a single
// stream_not_found for a missing or soft-deleted stream.
func (r *reader) readStream(ctx context.Context, so *streams.ReadReq_Options_StreamOptions, backwards bool, count uint64) error {
	name := string(so.GetStreamIdentifier().GetStreamName())
	if name == "" {
		return errEmptyStream
	}
	n := clampCount(count)
	r.st.mu.Lock()
	var page []*record
	var found readStatus
	switch rev := so.GetRevisionOption().(type) {
	case *streams.ReadReq_Options_StreamOptions_Revision:
		from := int64(min(rev.Revision, math.MaxInt64))
		if backwards {
			page, found = r.st.readBackward(name, from, n)
		} else {
			page, _, found = r.st.readForward(name, from, n)
		}
	case *streams.ReadReq_Options_StreamOptions_End:
		if backwards {
			page, found = r.st.readBackward(name, math.MaxInt64, n)
		} else {
			page, _, found = r.st.readForward(name, math.MaxInt64, n)
		}
	default: // start
		if backwards {
			page, found = r.st.readBackward(name, -1, n)
		} else {
			page, _, found = r.st.readForward(name, 0, n)
		}
	}
	r.st.mu.Unlock()
	switch found {
	case statusDeleted:
		return errStreamDeleted(ctx, name)
	case statusNoStream:
		return r.out.Send(notFoundResp(name))
	}
	for _, rec := range page {
		if err := r.send(rec); err != nil {
			return err
		}
	}
	return nil
}

// readAll answers a plain $all read. Forwards from P is inclusive;
// backwards from P returns the records that end at or before P.
// Stream metadata does not apply to $all, so deleted and truncated events
// stay visible, as on a server that has not scavenged.
func (r *reader) readAll(ao *streams.ReadReq_Options_AllOptions, backwards bool, count uint64, f *eventFilter) error {
	n := clampCount(count)
	r.st.mu.Lock()
	var page []*record
	log := r.st.log
	switch pos := ao.GetAllOption().(type) {
	case *streams.ReadReq_Options_AllOptions_Position:
		p := fromWire(pos.Position.GetCommitPosition(), pos.Position.GetPreparePosition())
		switch {
		case p == headOfLog && backwards: // 2^64-1 is Position.End
			page = collectBackward(log, func(*record) bool { return true }, f, n)
		case p == headOfLog:
		case backwards:
			page = collectBackward(log, func(rec *record) bool { return rec.end <= p.commit }, f, n)
		default:
			page = collectForward(log, func(rec *record) bool { return !rec.position().less(p) }, f, n)
		}
	case *streams.ReadReq_Options_AllOptions_End:
		if backwards {
			page = collectBackward(log, func(*record) bool { return true }, f, n)
		}
	default: // start
		if !backwards {
			page = collectForward(log, func(*record) bool { return true }, f, n)
		}
	}
	r.st.mu.Unlock()
	for _, rec := range page {
		if err := r.send(rec); err != nil {
			return err
		}
	}
	return nil
}

func clampCount(count uint64) int { return int(min(count, math.MaxInt32)) }
