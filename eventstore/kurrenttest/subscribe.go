package kurrenttest

import (
	"context"
	"math"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"google.golang.org/grpc/status"
)

// subscribeStream serves a stream subscription (Enumerator.StreamSubscription):
// confirmation, catch-up through paged reads from the start point
// (exclusive), caught_up, then live events in commit order. Live events
// ignore metadata, as the server's do. A tombstone ends the call with the
// StreamDeleted error: before the confirmation when the stream already was
// tombstoned, right after delivering the $streamDeleted event when it
// happens live.
func (r *reader) subscribeStream(ctx context.Context, so *streams.ReadReq_Options_StreamOptions) error {
	name := string(so.GetStreamIdentifier().GetStreamName())
	if name == "" {
		return errEmptyStream
	}
	r.st.mu.Lock()
	last := r.st.lastNumber(name)
	cursor := r.st.streamLen(name) // live events are the ones appended from here on
	r.st.mu.Unlock()
	if last == deletedStream {
		return errStreamDeleted(ctx, name)
	}
	if err := r.out.Send(confirmationResp(uuid.NewString())); err != nil {
		return err
	}
	checkpoint := int64(-1) // the last event number sent
	switch rev := so.GetRevisionOption().(type) {
	case *streams.ReadReq_Options_StreamOptions_End:
		checkpoint = last
	case *streams.ReadReq_Options_StreamOptions_Revision:
		checkpoint = int64(min(rev.Revision, math.MaxInt64))
	}
	if checkpoint < last {
		var err error
		if checkpoint, err = r.catchUpStream(ctx, name, checkpoint); err != nil {
			return err
		}
	}
	if err := r.out.Send(caughtUpResp()); err != nil {
		return err
	}
	for {
		recs, err := r.st.await(ctx, func() []*record { return r.st.streamSince(name, cursor) })
		if err != nil {
			return err
		}
		cursor += len(recs)
		for _, rec := range recs {
			if rec.number <= checkpoint {
				continue // already sent during catch-up
			}
			if err := r.send(rec); err != nil {
				return err
			}
			checkpoint = rec.number
			if rec.tombstone() {
				return errStreamDeleted(ctx, name)
			}
		}
	}
}

// catchUpStream sends the visible events after checkpoint, a page at a time,
// and returns the last number sent.
func (r *reader) catchUpStream(ctx context.Context, name string, checkpoint int64) (int64, error) {
	for {
		r.st.mu.Lock()
		page, end, found := r.st.readForward(name, checkpoint+1, readBatchSize)
		r.st.mu.Unlock()
		switch found {
		case statusDeleted:
			return checkpoint, errStreamDeleted(ctx, name)
		case statusNoStream:
			return checkpoint, nil
		}
		for _, rec := range page {
			if err := r.send(rec); err != nil {
				return checkpoint, err
			}
			checkpoint = rec.number
		}
		if end {
			return checkpoint, nil
		}
	}
}

// await returns what read finds under the store's lock, waiting for
// commits while it finds nothing.
func (st *store) await(ctx context.Context, read func() []*record) ([]*record, error) {
	for {
		st.mu.Lock()
		recs := read()
		wake := st.changed()
		st.mu.Unlock()
		if len(recs) > 0 {
			return recs, nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
}
