package eventstore_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// update writes golden files that do not exist yet. It never rewrites one:
// a released wire format is decoded forever, so a changed shape is a new
// versioned type with a new file, not an edited file.
var update = flag.Bool("update", false, "write missing golden files in testdata/events")

const goldenDir = "testdata/events"

// goldenFixtures holds one event per wire type, as a provider would report
// it; -update writes new types' golden files from it.
func goldenFixtures() map[string]domain.Event {
	meta := func(id, providerType string) domain.Meta {
		return domain.Meta{
			Provider:          "stripe",
			ProviderEventID:   id,
			ProviderEventType: providerType,
			ProviderPaymentID: "pi_3Nk-x_Y2eZvKYlo2C0tqnVA",
			OccurredAt:        time.Date(2026, 3, 14, 9, 26, 53, 0, time.UTC),
		}
	}
	withSubKey := func(m domain.Meta, k string) domain.Meta { m.SubKey = k; return m }
	evs := []domain.Event{
		&domain.PaymentCreated{Meta: meta("evt_3Nk-x_Y2eZvKYlo2C1xT6nB", "payment_intent.created"), Amount: 125050, Currency: "BRL"},
		&domain.PaymentProcessing{Meta: meta("evt_3Nk-x_Y2eZvKYlo2C2aQ7mC", "payment_intent.processing"), Amount: 125050, Currency: "BRL"},
		&domain.PaymentActionRequired{Meta: meta("evt_3Nk-x_Y2eZvKYlo2C3bR8nD", "payment_intent.requires_action"), Amount: 125050, Currency: "BRL"},
		&domain.PaymentAuthorized{Meta: meta("evt_3Nk-x_Y2eZvKYlo2C4cS9oE", "payment_intent.amount_capturable_updated"), Amount: 125050, AmountCapturable: 125050, Currency: "BRL"},
		&domain.PaymentFailed{Meta: meta("evt_3Nk-x_Y2eZvKYlo2C5dT0pF", "payment_intent.payment_failed"), Amount: 125050, Currency: "BRL", Code: "card_declined", Message: "Your card was declined."},
		&domain.PaymentCancelled{Meta: meta("evt_3Nk-x_Y2eZvKYlo2C6eU1qG", "payment_intent.canceled"), Amount: 125050, Currency: "BRL", Reason: "requested_by_customer"},
		&domain.PaymentSucceeded{Meta: meta("evt_3Nk-x_Y2eZvKYlo2C7fV2rH", "payment_intent.succeeded"), Amount: 125050, AmountReceived: 125050, Currency: "BRL"},
		&domain.PaymentRefunded{Meta: withSubKey(meta("evt_3Nk-x_Y2eZvKYlo2C8gW3sI", "charge.refunded"), "re_3Nk-x_Y2eZvKYlo2C8k"), AmountRefunded: 25050, AmountCaptured: 125050, Currency: "BRL"},
		&domain.DisputeOpened{Meta: meta("evt_3Nk-x_Y2eZvKYlo2C9hX4tJ", "charge.dispute.created"), DisputeID: "dp_1Nk-x_Y2eZvKYlo2C0iY5uK", Amount: 125050, Currency: "BRL", Reason: "fraudulent"},
		&domain.DisputeClosed{Meta: meta("evt_3Nk-x_Y2eZvKYlo2D0jZ6vL", "charge.dispute.closed"), DisputeID: "dp_1Nk-x_Y2eZvKYlo2C0iY5uK", Outcome: domain.DisputeWon, Amount: 125050, Currency: "BRL"},
		&domain.PaymentNotified{Meta: meta("108236542341", "payment"), Action: "payment.updated"},
		&domain.FeeAssessed{Meta: withSubKey(meta("fee_7a2d41c9e0b35f68", "api.balance_transaction"), "fee"), Amount: 4573, Currency: "USD", Source: "balance_transaction txn_3Nk-x_Y2eZvKYlo2C1bT7uQ"},
		&domain.InquiryOpened{Meta: meta("evt_3Nk-x_Y2eZvKYlo2C9iQ8wM", "charge.dispute.created"), DisputeID: "du_1Nk-x_Y2eZvKYlo2C0jX4vN", Amount: 125050, Currency: "BRL", Reason: "general"},
		&domain.PaymentStatusObserved{Meta: meta("obs_5f1c0e2a9b7d4c3e", "api.payment"), Status: domain.StatusPartiallyRefunded,
			ProviderStatus: "approved", ProviderStatusDetail: "partially_refunded", Amount: 125050, AmountCaptured: 125050, AmountRefunded: 25050, Currency: "BRL"},
		&domain.ReconciliationChecked{Meta: meta(domain.CheckEventID("pass-4211-1", "pi_3Nk-x_Y2eZvKYlo2C0tqnVA"), domain.ReconciliationEventType),
			Run: "pass-4211-1", Trigger: domain.TriggerInDoubt, StatusBefore: domain.StatusPending, StatusObserved: domain.StatusConfirmed,
			ProviderStatus: "succeeded", StatusAfter: domain.StatusConfirmed, Outcome: domain.OutcomeCorrected, Cause: domain.CauseMissingWebhook,
			EventID: "0b6c3d1e-5f3a-5d8e-9a41-6f2c7b1e2d90"},
		&domain.ReviewOpened{Meta: meta("rev_6f1d2c3b4a5e6f7081929a0b", domain.ReviewEventType), ReviewID: "rev_6f1d2c3b4a5e6f7081929a0b",
			Reason: domain.ReviewConfirmationTimeout, Cause: "status:awaiting_confirmation", Status: domain.StatusAwaitingConfirmation,
			Deadline: time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)},
		&domain.ReviewResolved{Meta: meta(domain.ResolvedEventID("rev_6f1d2c3b4a5e6f7081929a0b"), domain.ReviewEventType),
			ReviewID: "rev_6f1d2c3b4a5e6f7081929a0b", Resolution: domain.ResolutionWrittenOff, Note: "boleto never paid; customer contacted",
			ResolvedBy: "ana"},
	}
	m := make(map[string]domain.Event, len(evs))
	for _, e := range evs {
		m[e.EventType()] = e
	}
	return m
}

// goldenJSON is the golden file form of event data: indented, so a diff of
// a changed wire format is readable.
func goldenJSON(t *testing.T, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := json.Indent(&b, data, "", "  "); err != nil {
		t.Fatalf("indent %s: %v", data, err)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// TestGoldenEvents decodes every event type's golden payload, re-encodes it
// byte for byte (a renamed, removed or retyped field fails here) and folds
// it. These files are what the store holds: they must decode forever.
func TestGoldenEvents(t *testing.T) {
	codec := eventstore.NewCodec()
	fixtures := goldenFixtures()
	for _, typ := range slices.Sorted(maps.Keys(domain.Types())) {
		t.Run(typ, func(t *testing.T) {
			path := filepath.Join(goldenDir, typ+".json")
			if *update {
				writeMissingGolden(t, codec, path, fixtures[typ])
			}
			golden, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v: add a fixture to goldenFixtures and run go test ./eventstore -run TestGoldenEvents -update", err)
			}
			ev, err := codec.DecodeData(typ, golden)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			if ev.EventType() != typ {
				t.Fatalf("decoded a %s, want %s", ev.EventType(), typ)
			}
			enc, err := codec.Encode(ev, eventstore.Metadata{})
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if got := goldenJSON(t, enc.Data); !bytes.Equal(got, golden) {
				t.Fatalf("re-encoding changed the stored format of %s (make a new version instead):\ngot  %s\nwant %s", typ, got, golden)
			}
			if enc.ID != eventstore.EventID(ev.EventMeta()) || enc.Type != typ {
				t.Fatalf("encoded ID %v type %q, want %v %q", enc.ID, enc.Type, eventstore.EventID(ev.EventMeta()), typ)
			}
			s := domain.Fold(ev).State()
			if domain.IsOwnFact(ev) {
				// payledger's own fact: the fold keeps it but takes no state from it.
				if s.EventCount != 0 || s.Status != "" {
					t.Fatalf("fold of the golden %s = %+v, want no state", typ, s)
				}
				return
			}
			if s.EventCount != 1 || s.Provider != "stripe" || s.ProviderPaymentID == "" || s.Status == "" {
				t.Fatalf("fold of the golden %s = %+v", typ, s)
			}
		})
	}
}

// writeMissingGolden writes the golden file of a new event type.
func writeMissingGolden(t *testing.T, codec *eventstore.Codec, path string, fixture domain.Event) {
	t.Helper()
	if _, err := os.Stat(path); err == nil {
		return // released: never rewritten
	}
	if fixture == nil {
		t.Fatalf("no fixture for %s in goldenFixtures", filepath.Base(path))
	}
	enc, err := codec.Encode(fixture, eventstore.Metadata{})
	if err != nil {
		t.Fatalf("encode fixture: %v", err)
	}
	if err := os.WriteFile(path, goldenJSON(t, enc.Data), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s", path)
}

// TestGoldenFilesKnown: every golden file names a type of the catalogue. A
// file without a type means a wire version was dropped, and the events
// stored under it could no longer be read.
func TestGoldenFilesKnown(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(goldenDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	types := domain.Types()
	for _, f := range files {
		if typ := strings.TrimSuffix(filepath.Base(f), ".json"); types[typ] == nil {
			t.Errorf("%s: type %q is not in domain.Types: its stored events would no longer decode", f, typ)
		}
	}
}

// TestEventIDPinned: the deterministic ID of a delivery never changes (the
// namespace or the name format changing would make every redelivered
// webhook look new).
func TestEventIDPinned(t *testing.T) {
	tests := []struct {
		meta domain.Meta
		want string
	}{
		{domain.Meta{Provider: "stripe", ProviderEventID: "evt_3Nk-x_Y2eZvKYlo2C1xT6nB"}, "8d0d3d9f-97d8-5b9e-9190-8008372581a5"},
		{domain.Meta{Provider: "stripe", ProviderEventID: "evt_3Nk-x_Y2eZvKYlo2C1xT6nB", SubKey: "re_1Nk-x_Y"}, "d76a56bb-8b4d-5cda-905b-9e46d6240269"},
	}
	for _, tt := range tests {
		if got := eventstore.EventID(tt.meta).String(); got != tt.want {
			t.Errorf("EventID(%+v) = %s, want %s", tt.meta, got, tt.want)
		}
	}
}

func TestDecodeUnknownType(t *testing.T) {
	_, err := eventstore.NewCodec().DecodeData("payment.teleported.v1", []byte(`{}`))
	if !errors.Is(err, eventstore.ErrUnknownType) {
		t.Fatalf("decode = %v, want ErrUnknownType", err)
	}
}

// TestGoldenEventVariants: optional fields added to a released type after
// its golden file was written (a snapshot stating the fee) have golden files
// of their own, named type+variant, held to the same rules: they decode,
// re-encode byte for byte and fold to what they say.
func TestGoldenEventVariants(t *testing.T) {
	codec := eventstore.NewCodec()
	tests := []struct {
		file  string
		check func(domain.PaymentState) bool
	}{
		{file: "payment.status_observed.v1+fee.json", check: func(s domain.PaymentState) bool {
			return s.Status == domain.StatusConfirmed && s.Fee == 549 && s.FeeCurrency == "BRL"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			golden, err := os.ReadFile(filepath.Join(goldenDir, "variants", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			typ, _, _ := strings.Cut(tt.file, "+")
			ev, err := codec.DecodeData(typ, golden)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			enc, err := codec.Encode(ev, eventstore.Metadata{})
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			if got := goldenJSON(t, enc.Data); !bytes.Equal(got, golden) {
				t.Fatalf("re-encoding changed the stored format:\ngot  %s\nwant %s", got, golden)
			}
			if s := domain.Fold(ev).State(); !tt.check(s) {
				t.Fatalf("fold = %+v", s)
			}
		})
	}
}
