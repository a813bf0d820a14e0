package kurrenttest

import (
	"context"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
)

// softDeleteMeta is the metadata a soft delete writes, replacing any other
// keys: $tb = DeletedStream.
const softDeleteMeta = `{"$tb":9223372036854775807}`

// Delete implements Streams.Delete, the soft delete: it writes $tb =
// DeletedStream to the metastream. Reads then answer stream_not_found until
// an append recreates the stream, numbering on from where it left off.
func (s *streamsService) Delete(ctx context.Context, req *streams.DeleteReq) (*streams.DeleteResp, error) {
	o := req.GetOptions()
	exp, err := revisionOption(o.GetExpectedStreamRevision())
	if err != nil {
		return nil, err
	}
	pos, err := s.delete(ctx, string(o.GetStreamIdentifier().GetStreamName()), exp, false)
	if err != nil {
		return nil, err
	}
	return &streams.DeleteResp{PositionOption: &streams.DeleteResp_Position_{Position: &streams.DeleteResp_Position{
		CommitPosition: uint64(pos), PreparePosition: uint64(pos),
	}}}, nil
}

// Tombstone implements Streams.Tombstone, the hard delete: a $streamDeleted
// record numbered 2^63-1 ends the stream for good.
func (s *streamsService) Tombstone(ctx context.Context, req *streams.TombstoneReq) (*streams.TombstoneResp, error) {
	o := req.GetOptions()
	exp, err := revisionOption(o.GetExpectedStreamRevision())
	if err != nil {
		return nil, err
	}
	pos, err := s.delete(ctx, string(o.GetStreamIdentifier().GetStreamName()), exp, true)
	if err != nil {
		return nil, err
	}
	return &streams.TombstoneResp{PositionOption: &streams.TombstoneResp_Position_{Position: &streams.TombstoneResp_Position{
		CommitPosition: uint64(pos), PreparePosition: uint64(pos),
	}}}, nil
}

// delete runs the commit check with a fresh random id, as WriteDelete does,
// so the expected-revision rules are the append ones, then writes the
// tombstone or the soft-delete metadata and returns its position.
func (s *streamsService) delete(ctx context.Context, name string, exp expected, hard bool) (int64, error) {
	if name == "" {
		return 0, errEmptyStream
	}
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	d := st.check(name, exp, []uuid.UUID{uuid.New()})
	switch d.verdict {
	case verdictDeleted:
		return 0, errStreamDeleted(ctx, name)
	case verdictWrongVersion, verdictIdempotent:
		return 0, errDeleteWrongVersion(ctx, name, exp.version(), d.current)
	}
	var r *record
	if hard {
		r = st.commit(name, deletedStream, proposed{id: uuid.New(), typ: "$streamDeleted"})
	} else {
		meta := metastreamOf(name)
		last := st.lastNumber(meta)
		if st.lastNumber(name) < 0 && last < 0 {
			return 0, errDeleteWrongVersion(ctx, name, exp.version(), noStream)
		}
		r = st.commit(meta, last+1, proposed{id: uuid.New(), typ: "$metadata", json: true, data: []byte(softDeleteMeta)})
	}
	st.notify()
	return r.pos, nil
}

// revisionOption reads the expected revision of Delete and Tombstone, whose
// oneof types differ from Append's only by name.
func revisionOption(o any) (expected, error) {
	switch r := o.(type) {
	case *streams.DeleteReq_Options_Any, *streams.TombstoneReq_Options_Any:
		return expected{kind: expectAny}, nil
	case *streams.DeleteReq_Options_NoStream, *streams.TombstoneReq_Options_NoStream:
		return expected{kind: expectNoStream}, nil
	case *streams.DeleteReq_Options_StreamExists, *streams.TombstoneReq_Options_StreamExists:
		return expected{kind: expectStreamExists}, nil
	case *streams.DeleteReq_Options_Revision:
		return exactRevision(r.Revision)
	case *streams.TombstoneReq_Options_Revision:
		return exactRevision(r.Revision)
	}
	return expected{}, errInvalid("expected stream revision is required")
}
