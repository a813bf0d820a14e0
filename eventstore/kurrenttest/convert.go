package kurrenttest

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/shared"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
)

// parseUUID accepts both wire forms: two big-endian halves stored as signed
// 64-bit integers, or the string form.
func parseUUID(u *shared.UUID) (uuid.UUID, error) {
	switch v := u.GetValue().(type) {
	case *shared.UUID_Structured_:
		var id uuid.UUID
		binary.BigEndian.PutUint64(id[:8], uint64(v.Structured.GetMostSignificantBits()))
		binary.BigEndian.PutUint64(id[8:], uint64(v.Structured.GetLeastSignificantBits()))
		if id == uuid.Nil {
			return id, errors.New("empty eventId provided")
		}
		return id, nil
	case *shared.UUID_String_:
		return uuid.Parse(v.String_)
	}
	return uuid.Nil, errors.New("event id is required")
}

// wireUUID encodes id in the form the read request asked for.
func wireUUID(id uuid.UUID, asString bool) *shared.UUID {
	if asString {
		return &shared.UUID{Value: &shared.UUID_String_{String_: id.String()}}
	}
	return &shared.UUID{Value: &shared.UUID_Structured_{Structured: &shared.UUID_Structured{
		MostSignificantBits:  int64(binary.BigEndian.Uint64(id[:8])),
		LeastSignificantBits: int64(binary.BigEndian.Uint64(id[8:])),
	}}}
}

func streamID(name string) *shared.StreamIdentifier {
	return &shared.StreamIdentifier{StreamName: []byte(name)}
}

// eventResp converts r as Streams.Read.cs does: the metadata map is rebuilt
// with exactly type, content-type and created; commit = prepare = the
// record's position, on stream reads too.
func eventResp(r *record, uuidString bool) *streams.ReadResp {
	contentType := "application/octet-stream"
	if r.json {
		contentType = "application/json"
	}
	ev := &streams.ReadResp_ReadEvent_RecordedEvent{
		Id:               wireUUID(r.id, uuidString),
		StreamIdentifier: streamID(r.stream),
		StreamRevision:   uint64(r.number),
		PreparePosition:  uint64(r.pos),
		CommitPosition:   uint64(r.pos),
		Metadata: map[string]string{
			"type":         r.typ,
			"content-type": contentType,
			"created":      strconv.FormatInt(r.created, 10),
		},
		CustomMetadata: r.meta,
		Data:           r.data,
	}
	return &streams.ReadResp{Content: &streams.ReadResp_Event{Event: &streams.ReadResp_ReadEvent{
		Event:    ev,
		Position: &streams.ReadResp_ReadEvent_CommitPosition{CommitPosition: uint64(r.pos)},
	}}}
}

func notFoundResp(name string) *streams.ReadResp {
	return &streams.ReadResp{Content: &streams.ReadResp_StreamNotFound_{
		StreamNotFound: &streams.ReadResp_StreamNotFound{StreamIdentifier: streamID(name)},
	}}
}

func confirmationResp(id string) *streams.ReadResp {
	return &streams.ReadResp{Content: &streams.ReadResp_Confirmation{
		Confirmation: &streams.ReadResp_SubscriptionConfirmation{SubscriptionId: id},
	}}
}

func caughtUpResp() *streams.ReadResp {
	return &streams.ReadResp{Content: &streams.ReadResp_CaughtUp_{CaughtUp: &streams.ReadResp_CaughtUp{}}}
}

func checkpointResp(p tfpos) *streams.ReadResp {
	c, pr := p.wire()
	return &streams.ReadResp{Content: &streams.ReadResp_Checkpoint_{
		Checkpoint: &streams.ReadResp_Checkpoint{CommitPosition: c, PreparePosition: pr},
	}}
}
