package kurrenttest

import (
	"errors"
	"io"
	"math"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
)

// Append implements Streams.Append: an options message, then one proposed
// message per event, answered once the client closes its side.
func (s *streamsService) Append(stream streams.Streams_AppendServer) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	opts := first.GetOptions()
	if opts == nil {
		return errHandler("append: options must come first")
	}
	name := string(opts.GetStreamIdentifier().GetStreamName())
	if name == "" {
		return errEmptyStream
	}
	exp, err := appendExpected(opts)
	if err != nil {
		return err
	}
	evs, err := s.receiveEvents(stream)
	if err != nil {
		return err
	}
	ids := idsOf(evs)

	st := s.st
	st.mu.Lock()
	d := st.check(name, exp, ids)
	var last, pos int64
	switch d.verdict {
	case verdictOK:
		last, pos = st.write(name, d, evs)
	case verdictIdempotent:
		last, pos = d.last, -1
		if r := st.visible(name, d.last); r != nil {
			pos = r.pos
		}
	}
	st.mu.Unlock()

	switch d.verdict {
	case verdictDeleted:
		return errStreamDeleted(ctx, name)
	case verdictWrongVersion:
		return stream.SendAndClose(wrongVersionResp(exp, d.current))
	}
	return stream.SendAndClose(successResp(last, pos))
}

// receiveEvents reads the proposed messages, validating them as the server
// does: type and content-type are required, and the batch's size on disk
// (data + metadata + 2 bytes per type character) is capped.
func (s *streamsService) receiveEvents(stream streams.Streams_AppendServer) ([]proposed, error) {
	ctx := stream.Context()
	var evs []proposed
	size := 0
	for {
		msg, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return evs, nil
		}
		if err != nil {
			return nil, err
		}
		pm := msg.GetProposedMessage()
		if pm == nil {
			return nil, errHandler("append: expected a proposed message")
		}
		typ, ok := pm.GetMetadata()["type"]
		if !ok {
			return nil, errMissingMetadata(ctx, "type")
		}
		contentType, ok := pm.GetMetadata()["content-type"]
		if !ok {
			return nil, errMissingMetadata(ctx, "content-type")
		}
		id, err := parseUUID(pm.GetId())
		if err != nil {
			return nil, errHandler("append: %v", err)
		}
		if typ == "" {
			return nil, errHandler("append: empty eventType provided")
		}
		size += len(pm.GetData()) + len(pm.GetCustomMetadata()) + 2*len(typ)
		if size > s.maxAppend {
			return nil, errAppendTooLarge(ctx, s.maxAppend)
		}
		evs = append(evs, proposed{
			id:   id,
			typ:  typ,
			json: contentType == "application/json",
			data: append([]byte{}, pm.GetData()...),
			meta: append([]byte{}, pm.GetCustomMetadata()...),
		})
	}
}

func appendExpected(o *streams.AppendReq_Options) (expected, error) {
	switch r := o.GetExpectedStreamRevision().(type) {
	case *streams.AppendReq_Options_Any:
		return expected{kind: expectAny}, nil
	case *streams.AppendReq_Options_NoStream:
		return expected{kind: expectNoStream}, nil
	case *streams.AppendReq_Options_StreamExists:
		return expected{kind: expectStreamExists}, nil
	case *streams.AppendReq_Options_Revision:
		return exactRevision(r.Revision)
	}
	return expected{}, errInvalid("expected stream revision is required")
}

func exactRevision(rev uint64) (expected, error) {
	if rev > math.MaxInt64 {
		return expected{}, errInvalid("revision %d is out of range", rev)
	}
	return expected{kind: expectExact, rev: int64(rev)}, nil
}

func idsOf(evs []proposed) []uuid.UUID {
	ids := make([]uuid.UUID, len(evs))
	for i, e := range evs {
		ids[i] = e.id
	}
	return ids
}
