package storetest

import (
	"bytes"
	"testing"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

func testReadMissingStream(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	evs, err := s.ReadStream(sc.ctx, sc.stream("never-written"))
	if err != nil || len(evs) != 0 {
		t.Fatalf("read = %v, %v; want no events and no error", evs, err)
	}
}

// testReadRoundTrip: what ReadStream returns is what Append was given, plus
// the store's revision, time and position.
func testReadRoundTrip(t *testing.T, s eventstore.Store) {
	sc := newScope(t, s)
	stream := sc.stream("roundtrip")
	sent := []eventstore.EventData{
		sc.encode(&domain.PaymentCreated{
			Meta: sc.meta("roundtrip", "created", "payment_intent.created"), Amount: 125050, Currency: "BRL",
		}),
		sc.encode(&domain.PaymentFailed{
			Meta: sc.meta("roundtrip", "failed", "payment_intent.payment_failed"), Amount: 125050, Currency: "BRL",
			Code: "card_declined", Message: "Your card was declined. «Não autorizado»",
		}),
		sc.encode(&domain.PaymentSucceeded{
			Meta: sc.meta("roundtrip", "succeeded", "payment_intent.succeeded"), Amount: 125050, AmountReceived: 125050, Currency: "BRL",
		}),
	}
	first := sc.mustAppend(stream, eventstore.NoStream(), sent[:2]...)
	second := sc.mustAppend(stream, eventstore.Exact(1), sent[2])

	got := sc.read(stream)
	if len(got) != len(sent) {
		t.Fatalf("read %d events, want %d", len(got), len(sent))
	}
	for i, e := range got {
		checkRecorded(t, i, e, sent[i], stream)
		if i > 0 && e.Position.Compare(got[i-1].Position) <= 0 {
			t.Errorf("event %d: position %v not after %v", i, e.Position, got[i-1].Position)
		}
	}
	if got[1].Position != first.Position || got[2].Position != second.Position {
		t.Errorf("positions %v, %v; appends reported %v, %v", got[1].Position, got[2].Position, first.Position, second.Position)
	}
}

// checkRecorded compares one stored event with what was appended.
func checkRecorded(t *testing.T, i int, got eventstore.RecordedEvent, sent eventstore.EventData, stream string) {
	t.Helper()
	if got.ID != sent.ID || got.Type != sent.Type || got.Stream != stream || got.Revision != uint64(i) {
		t.Errorf("event %d: id %v type %q stream %q revision %d; want %v %q %q %d",
			i, got.ID, got.Type, got.Stream, got.Revision, sent.ID, sent.Type, stream, i)
	}
	if got.RecordedAt.IsZero() || got.Position == eventstore.Start {
		t.Errorf("event %d: recorded at %v, position %v; want both set", i, got.RecordedAt, got.Position)
	}
	for _, f := range []struct {
		name      string
		got, sent []byte
	}{{"data", got.Data, sent.Data}, {"metadata", got.Metadata, sent.Metadata}} {
		if eq, err := jsonEqual(f.got, f.sent); err != nil || !eq {
			t.Errorf("event %d %s = %s, want %s (%v)", i, f.name, f.got, f.sent, err)
		}
	}
	gotMeta, err := eventstore.DecodeMetadata(got.Metadata)
	if err != nil {
		t.Fatalf("event %d: %v", i, err)
	}
	sentMeta, _ := eventstore.DecodeMetadata(sent.Metadata)
	if !bytes.Equal(gotMeta.RawBody, sentMeta.RawBody) || !gotMeta.ReceivedAt.Equal(sentMeta.ReceivedAt) {
		t.Errorf("event %d: metadata raw body %q received %v, want %q %v", i, gotMeta.RawBody, gotMeta.ReceivedAt, sentMeta.RawBody, sentMeta.ReceivedAt)
	}
	if _, err := eventstore.NewCodec().Decode(got); err != nil {
		t.Errorf("event %d: decode: %v", i, err)
	}
}
