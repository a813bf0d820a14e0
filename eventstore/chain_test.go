package eventstore_test

import (
	"encoding/hex"
	"testing"

	"github.com/google/uuid"

	"github.com/payledger/payledger/eventstore"
)

// chainVector is a stream of two events and their hashes, computed by an
// independent implementation of the encoding documented on ChainHash (and
// in ARCHITECTURE.md). A change of the encoding breaks this test: it must
// be a new chain version, never an edit.
var chainVector = []struct {
	event eventstore.RecordedEvent
	want  string
}{
	{eventstore.RecordedEvent{
		ID:       uuid.MustParse("0b6f2c1e-8d4a-5e3b-9f10-2a7c4e5d6b01"),
		Stream:   "payment-stripe-pi_3Nk-x_Y2eZvKYlo2C0tqnVA",
		Revision: 0,
		Type:     "payment.created.v1",
		Data:     []byte(`{"amount": 1000, "currency": "BRL"}`),
		Metadata: []byte(`{"source": "webhook"}`),
	}, "75a6bc442a520c6a4363508eab28ece165b01396ab50eb333531824a24f5a65a"},
	{eventstore.RecordedEvent{
		ID:       uuid.MustParse("0b6f2c1e-8d4a-5e3b-9f10-2a7c4e5d6b02"),
		Stream:   "payment-stripe-pi_3Nk-x_Y2eZvKYlo2C0tqnVA",
		Revision: 1,
		Type:     "payment.succeeded.v1",
		Data:     []byte(`{"amount": 1000}`),
	}, "4b0ab073262e4cd08275f282a2eb7c6ed6162e230171d465d4c656664b83e577"},
}

func TestChainHashGoldenVector(t *testing.T) {
	if got := hex.EncodeToString(eventstore.ChainSeed[:]); got != "1000d718f0d63bf767aba422755e658bed3bcb9ceba963423d80e2a3a261c84c" {
		t.Fatalf("ChainSeed = %s", got)
	}
	prev := eventstore.ChainSeed
	for _, v := range chainVector {
		prev = eventstore.ChainHash(prev, v.event)
		if got := hex.EncodeToString(prev[:]); got != v.want {
			t.Errorf("revision %d: ChainHash = %s, want %s", v.event.Revision, got, v.want)
		}
	}
}

// TestChainHashCoversEveryField changes one covered field at a time (and
// moves bytes between adjacent fields, which the length prefixes tell
// apart): each must change the hash. Position and RecordedAt are not covered.
func TestChainHashCoversEveryField(t *testing.T) {
	base := chainVector[0].event
	want := eventstore.ChainHash(eventstore.ChainSeed, base)
	tests := []struct {
		name   string
		change func(e *eventstore.RecordedEvent)
	}{
		{"id", func(e *eventstore.RecordedEvent) { e.ID[15] ^= 1 }},
		{"stream", func(e *eventstore.RecordedEvent) { e.Stream += "x" }},
		{"revision", func(e *eventstore.RecordedEvent) { e.Revision = 1 }},
		{"type", func(e *eventstore.RecordedEvent) { e.Type = "payment.failed.v1" }},
		{"data", func(e *eventstore.RecordedEvent) { e.Data = []byte(`{"amount": 1001, "currency": "BRL"}`) }},
		{"metadata", func(e *eventstore.RecordedEvent) { e.Metadata = []byte(`{"source": "api"}`) }},
		{"data into metadata", func(e *eventstore.RecordedEvent) {
			e.Data, e.Metadata = e.Data[:len(e.Data)-1], append([]byte("}"), e.Metadata...)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := base
			tt.change(&e)
			if eventstore.ChainHash(eventstore.ChainSeed, e) == want {
				t.Error("the hash did not change")
			}
		})
	}
	if eventstore.ChainHash([32]byte{1}, base) == want {
		t.Error("the previous hash is not covered")
	}
}
