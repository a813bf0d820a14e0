package pagarme

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// obs builds the event Parse should produce. at is RFC 3339.
type obs struct {
	hook, typ, charge, subKey, at string
	status                        domain.Status
	providerStatus, detail        string
	amount, captured, refunded    int64
}

func (o obs) event(t *testing.T) *domain.PaymentStatusObserved {
	t.Helper()
	at, err := time.Parse(time.RFC3339Nano, o.at)
	if err != nil {
		t.Fatal(err)
	}
	return &domain.PaymentStatusObserved{
		Meta: domain.Meta{Provider: "pagarme", ProviderEventID: o.hook, SubKey: o.subKey, ProviderEventType: o.typ,
			ProviderPaymentID: o.charge, OccurredAt: at.UTC()},
		Status: o.status, ProviderStatus: o.providerStatus, ProviderStatusDetail: o.detail,
		Amount: o.amount, AmountCaptured: o.captured, AmountRefunded: o.refunded, Currency: "BRL"}
}

// TestParseTestdata maps every payload in testdata/events and the spec
// vector; every file must be listed.
func TestParseTestdata(t *testing.T) {
	const card = "ch_KjN7oWvTnCeGq3p1"
	tests := []struct {
		file        string
		want        []obs
		wantIgnored string
	}{
		{file: "vectors/pagarme_v5_payload.json", want: []obs{{hook: "hook_test_0001", typ: "charge.paid", charge: "ch_test_0001",
			at: "2026-01-15T12:00:00Z", status: domain.StatusConfirmed, providerStatus: "paid", amount: 12356, captured: 12356}}},
		{file: "events/charge.created.pix.json", want: []obs{{hook: "hook_A1pix0created00", typ: "charge.created", charge: "ch_pix0000000000001",
			at: "2026-01-15T12:00:00.123Z", status: domain.StatusAwaitingConfirmation, providerStatus: "pending", detail: "waiting_payment", amount: 5000}}},
		{file: "events/charge.pending.authorized.json", want: []obs{{hook: "hook_B2auth0pending0", typ: "charge.pending", charge: "ch_auth000000000001",
			at: "2026-01-15T12:00:02Z", status: domain.StatusAuthorized, providerStatus: "pending", detail: "authorized_pending_capture", amount: 15990}}},
		{file: "events/charge.paid.json", want: []obs{{hook: "hook_C3paid00000000", typ: "charge.paid", charge: card,
			at: "2026-01-15T12:00:05Z", status: domain.StatusConfirmed, providerStatus: "paid", detail: "captured", amount: 15990, captured: 15990}}},
		{file: "events/charge.underpaid.json", want: []obs{{hook: "hook_D4under0000000", typ: "charge.underpaid", charge: "ch_boleto000000001",
			at: "2026-01-15T13:00:00Z", status: domain.StatusConfirmed, providerStatus: "underpaid", detail: "underpaid", amount: 10000, captured: 9000}}},
		{file: "events/charge.overpaid.json", want: []obs{{hook: "hook_E5over00000000", typ: "charge.overpaid", charge: "ch_boleto000000002",
			at: "2026-01-15T13:00:00Z", status: domain.StatusConfirmed, providerStatus: "overpaid", detail: "overpaid", amount: 10000, captured: 10050}}},
		{file: "events/charge.payment_failed.json", want: []obs{{hook: "hook_F6failed000000", typ: "charge.payment_failed", charge: "ch_fail000000000001",
			at: "2026-01-15T12:00:03Z", status: domain.StatusFailed, providerStatus: "failed", detail: "not_authorized", amount: 15990}}},
		{file: "events/charge.antifraud_reproved.json", want: []obs{{hook: "hook_G7afreproved0", typ: "charge.antifraud_reproved", charge: "ch_af00000000000001",
			at: "2026-01-15T12:00:03Z", status: domain.StatusFailed, providerStatus: "failed", detail: "with_error", amount: 15990}}},
		{file: "events/charge.antifraud_manual.json", want: []obs{{hook: "hook_H8afmanual000", typ: "charge.antifraud_manual", charge: "ch_af00000000000002",
			at: "2026-01-15T12:00:03Z", status: domain.StatusAwaitingConfirmation, providerStatus: "processing", detail: "pending_review", amount: 15990}}},
		{file: "events/charge.canceled.before_payment.json", want: []obs{{hook: "hook_I9canceled000", typ: "charge.canceled", charge: "ch_pix0000000000001",
			at: "2026-01-16T12:00:00Z", status: domain.StatusCancelled, providerStatus: "canceled", detail: "expired", amount: 5000, refunded: 0}}}, // never paid: nothing refunded
		{file: "events/charge.refunded.json", want: []obs{{hook: "hook_J0refunded000", typ: "charge.refunded", charge: card,
			at: "2026-01-20T10:30:00Z", status: domain.StatusRefunded, providerStatus: "canceled", detail: "refunded", amount: 15990, captured: 15990, refunded: 15990}}},
		{file: "events/charge.partial_canceled.json", want: []obs{{hook: "hook_K1partial0000", typ: "charge.partial_canceled", charge: card,
			at: "2026-01-18T09:15:00Z", status: domain.StatusPartiallyRefunded, providerStatus: "paid", detail: "partial_refunded", amount: 15990, captured: 15990, refunded: 5000}}},
		{file: "events/charge.chargedback.json", want: []obs{{hook: "hook_L2chargeback0", typ: "charge.chargedback", charge: card,
			at: "2026-02-10T08:00:00Z", status: domain.StatusChargeback, providerStatus: "chargedback", detail: "chargedback", amount: 15990, captured: 15990}}},
		{file: "events/charge.paid.offsetless.json", want: []obs{{hook: "hook_RyEKQO789TRpZjv5", typ: "charge.paid", charge: "ch_1p9eD5xS7gFPYkmW",
			at: "2017-06-29T20:23:47Z", status: domain.StatusConfirmed, providerStatus: "paid", detail: "captured", amount: 1000, captured: 1000}}},
		{file: "events/order.paid.two_charges.json", want: []obs{
			{hook: "hook_M3orderpaid00", typ: "order.paid", charge: "ch_split00000000001", subKey: "ch_split00000000001",
				at: "2026-01-15T12:00:06.5Z", status: domain.StatusConfirmed, providerStatus: "paid", detail: "captured", amount: 6000, captured: 6000},
			{hook: "hook_M3orderpaid00", typ: "order.paid", charge: "ch_split00000000002", subKey: "ch_split00000000002",
				at: "2026-01-15T12:00:06.5Z", status: domain.StatusConfirmed, providerStatus: "paid", detail: "paid", amount: 4000, captured: 4000},
		}},
		{file: "events/order.canceled.charge_without_status.json", want: []obs{{hook: "hook_N4ordercancel", typ: "order.canceled",
			charge: "ch_ordcanc00000001", subKey: "ch_ordcanc00000001", at: "2026-01-17T12:00:00Z", status: domain.StatusCancelled, amount: 7000}}},
		{file: "events/order.created.no_charges.json", wantIgnored: "order or_new0000000000001 has no charges"},
		{file: "events/customer.created.json", wantIgnored: "event type customer.created is not tracked"},
		{file: "events/subscription.created.json", wantIgnored: "event type subscription.created is not tracked"},
		{file: "events/invoice.paid.json", wantIgnored: "event type invoice.paid is not tracked"},
	}
	p := newProvider(t, Config{Secrets: []string{vectorSecret}})
	seen := map[string]bool{}
	for _, tt := range tests {
		seen[tt.file] = true
		t.Run(tt.file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			h := headers(HeaderHub, SignHub(body, vectorSecret))
			if err := p.Verify(t.Context(), h, nil, body, t0); err != nil {
				t.Fatalf("Verify() = %v", err)
			}
			n, err := p.Parse(t.Context(), h, nil, body)
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			if n.Provider != "pagarme" || n.SignatureHeader != h.Get(HeaderHub) || n.ProviderEventID == "" {
				t.Errorf("notification identity %+v", n)
			}
			if tt.wantIgnored != "" {
				if len(n.Events) != 0 || !strings.Contains(n.IgnoredReason, tt.wantIgnored) {
					t.Fatalf("Parse() = %d events, ignored %q; want ignored %q", len(n.Events), n.IgnoredReason, tt.wantIgnored)
				}
				return
			}
			if n.IgnoredReason != "" || len(n.Events) != len(tt.want) {
				t.Fatalf("Parse() = %d events, ignored %q; want %d events", len(n.Events), n.IgnoredReason, len(tt.want))
			}
			for i, w := range tt.want {
				if want := w.event(t); !reflect.DeepEqual(n.Events[i], domain.Event(want)) {
					t.Errorf("event %d:\n got %+v\nwant %+v", i, n.Events[i], want)
				}
			}
		})
	}
	files, err := filepath.Glob("testdata/events/*.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if rel, _ := filepath.Rel("testdata", f); !seen[rel] {
			t.Errorf("%s is not in the table", f)
		}
	}
}

// TestParse covers envelopes and charge fields one at a time.
func TestParse(t *testing.T) {
	env := func(typ, created, data string) string {
		return `{"id":"hook_1","type":"` + typ + `","created_at":"` + created + `","data":` + data + `}`
	}
	ch := func(fields string) string {
		return env("charge.paid", "2026-01-15T12:00:00Z", `{"id":"ch_1","amount":1000`+fields+`}`)
	}
	tests := []struct {
		name        string
		body        string
		wantStatus  domain.Status // for a single charge event
		wantAt      string
		wantCur     domain.Currency
		wantCapture int64
		wantIgnored string
		wantErr     string
	}{
		{name: "Z with milliseconds", body: env("charge.paid", "2026-01-15T12:00:00.250Z", `{"id":"ch_1","amount":1000,"paid_amount":1000,"status":"paid"}`),
			wantStatus: domain.StatusConfirmed, wantAt: "2026-01-15T12:00:00.25Z", wantCapture: 1000},
		{name: "offset is converted to UTC", body: env("charge.paid", "2026-01-15T09:00:00-03:00", `{"id":"ch_1","amount":1000,"status":"paid"}`),
			wantStatus: domain.StatusConfirmed, wantAt: "2026-01-15T12:00:00Z", wantCapture: 1000},
		{name: "colon-less offset", body: env("charge.paid", "2026-01-15T09:00:00-0300", `{"id":"ch_1","amount":1000,"status":"paid"}`),
			wantStatus: domain.StatusConfirmed, wantAt: "2026-01-15T12:00:00Z", wantCapture: 1000},
		{name: "no offset is UTC", body: env("charge.paid", "2017-06-29T20:23:47", `{"id":"ch_1","amount":1000,"status":"paid"}`),
			wantStatus: domain.StatusConfirmed, wantAt: "2017-06-29T20:23:47Z", wantCapture: 1000},
		{name: "no offset with fraction is UTC", body: env("charge.paid", "2017-06-29T20:23:47.5", `{"id":"ch_1","amount":1000,"status":"paid"}`),
			wantStatus: domain.StatusConfirmed, wantAt: "2017-06-29T20:23:47.5Z", wantCapture: 1000},
		{name: "currency absent is BRL", body: ch(`,"status":"paid"`), wantStatus: domain.StatusConfirmed, wantCapture: 1000},
		{name: "currency lower-case", body: ch(`,"status":"paid","currency":"brl"`), wantStatus: domain.StatusConfirmed, wantCapture: 1000},
		{name: "another currency kept", body: ch(`,"status":"paid","currency":"USD"`), wantStatus: domain.StatusConfirmed, wantCur: "USD", wantCapture: 1000},
		{name: "paid_amount absent on a paid charge is the amount", body: ch(`,"status":"paid"`), wantStatus: domain.StatusConfirmed, wantCapture: 1000},
		{name: "paid_amount absent on a pending charge is zero", body: ch(`,"status":"pending"`), wantStatus: domain.StatusAwaitingConfirmation},
		{name: "nulls are absent", body: ch(`,"status":"paid","paid_amount":null,"canceled_amount":null,"currency":null,"last_transaction":null`),
			wantStatus: domain.StatusConfirmed, wantCapture: 1000},
		{name: "status prevails over type", body: env("charge.paid", "2026-01-15T12:00:00Z",
			`{"id":"ch_1","amount":1000,"paid_amount":1000,"canceled_amount":1000,"status":"canceled"}`), wantStatus: domain.StatusRefunded, wantCapture: 1000},
		{name: "unknown status and type: flagged for review", body: env("charge.updated", "2026-01-15T12:00:00Z", `{"id":"ch_1","amount":1000,"status":"mystery"}`),
			wantStatus: ""},
		{name: "event type without a dot is ignored", body: env("ping", "2026-01-15T12:00:00Z", `{}`), wantIgnored: "event type ping is not tracked"},
		{name: "ignored entity needs no data", body: `{"id":"hook_1","type":"recipient.updated","created_at":"2026-01-15T12:00:00Z"}`, wantIgnored: "not tracked"},

		{name: "not JSON", body: `hook_1`, wantErr: "malformed webhook JSON: invalid JSON"},
		{name: "JSON array", body: `[]`, wantErr: "malformed webhook JSON"},
		{name: "truncated", body: ch(`,"status":"paid"`)[:40], wantErr: "malformed webhook JSON"},
		{name: "no id", body: `{"type":"charge.paid","created_at":"2026-01-15T12:00:00Z","data":{}}`, wantErr: "id is missing"},
		{name: "id with a space", body: `{"id":"hook 1","type":"charge.paid","created_at":"2026-01-15T12:00:00Z","data":{}}`, wantErr: "id contains whitespace"},
		{name: "id a number", body: `{"id":1,"type":"charge.paid","created_at":"2026-01-15T12:00:00Z","data":{}}`, wantErr: "id has the wrong type"},
		{name: "no type", body: `{"id":"hook_1","created_at":"2026-01-15T12:00:00Z","data":{}}`, wantErr: "type is missing"},
		{name: "no created_at", body: `{"id":"hook_1","type":"charge.paid","data":{}}`, wantErr: "created_at is missing"},
		{name: "created_at a Unix number", body: `{"id":"hook_1","type":"charge.paid","created_at":1700000000,"data":{}}`, wantErr: "created_at has the wrong type"},
		{name: "created_at a date only", body: env("charge.paid", "2026-01-15", `{}`), wantErr: "is not an ISO-8601 timestamp"},
		{name: "created_at before 1970", body: env("charge.paid", "1969-12-31T23:59:59Z", `{}`), wantErr: "outside the years 1970..9999"},
		{name: "created_at past 9999 in UTC", body: env("charge.paid", "9999-12-31T23:00:00-05:00", `{}`), wantErr: "outside the years 1970..9999"},
		{name: "charge data missing", body: `{"id":"hook_1","type":"charge.paid","created_at":"2026-01-15T12:00:00Z"}`, wantErr: "data is missing or not an object"},
		{name: "charge data an array", body: env("charge.paid", "2026-01-15T12:00:00Z", `[]`), wantErr: "data is missing or not an object"},
		{name: "charge without id", body: env("charge.paid", "2026-01-15T12:00:00Z", `{"amount":1000}`), wantErr: "data.id is missing"},
		{name: "charge without amount", body: env("charge.paid", "2026-01-15T12:00:00Z", `{"id":"ch_1"}`), wantErr: "data.amount is missing"},
		{name: "decimal amount", body: env("charge.paid", "2026-01-15T12:00:00Z", `{"id":"ch_1","amount":10.5}`), wantErr: "data.amount has the wrong type"},
		{name: "amount as a string", body: env("charge.paid", "2026-01-15T12:00:00Z", `{"id":"ch_1","amount":"1000"}`), wantErr: "data.amount has the wrong type"},
		{name: "amount overflows int64", body: env("charge.paid", "2026-01-15T12:00:00Z", `{"id":"ch_1","amount":9223372036854775808}`), wantErr: "data.amount has the wrong type"},
		{name: "negative paid_amount", body: ch(`,"paid_amount":-1`), wantErr: "data.paid_amount is negative"},
		{name: "negative canceled_amount", body: ch(`,"canceled_amount":-1`), wantErr: "data.canceled_amount is negative"},
		{name: "bad currency", body: ch(`,"currency":"R$"`), wantErr: "data.currency"},
		{name: "status too long", body: ch(`,"status":"` + strings.Repeat("p", 65) + `"`), wantErr: "data.status is not a status word"},
		{name: "transaction status with a newline", body: ch(`,"last_transaction":{"status":"paid\n"}`), wantErr: "data.last_transaction.status is not a status word"},
		{name: "order without id", body: env("order.paid", "2026-01-15T12:00:00Z", `{"charges":[{"id":"ch_1","amount":1}]}`), wantErr: "data.id is missing"},
		{name: "order charge without id", body: env("order.paid", "2026-01-15T12:00:00Z", `{"id":"or_1","charges":[{"id":"ch_1","amount":1},{"amount":1}]}`),
			wantErr: "data.charges[1].id is missing"},
		{name: "order charge twice", body: env("order.paid", "2026-01-15T12:00:00Z", `{"id":"or_1","charges":[{"id":"ch_1","amount":1},{"id":"ch_1","amount":1}]}`),
			wantErr: `data.charges[1].id "ch_1" appears twice`},
		{name: "order charges not an array", body: env("order.paid", "2026-01-15T12:00:00Z", `{"id":"or_1","charges":{}}`), wantErr: "data.charges has the wrong type"},
	}
	p := newProvider(t, Config{Secrets: []string{vectorSecret}})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := p.Parse(t.Context(), nil, nil, []byte(tt.body))
			if tt.wantErr != "" {
				if domain.KindOf(err) != domain.KindInvalid || !strings.Contains(domain.MessageOf(err), tt.wantErr) {
					t.Fatalf("Parse() = %+v, %v; want invalid %q", n, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse() = %v", err)
			}
			if tt.wantIgnored != "" {
				if len(n.Events) != 0 || !strings.Contains(n.IgnoredReason, tt.wantIgnored) {
					t.Fatalf("Parse() = %+v, want ignored %q", n, tt.wantIgnored)
				}
				return
			}
			if len(n.Events) != 1 {
				t.Fatalf("Parse() = %+v, want one event", n)
			}
			ev := n.Events[0].(*domain.PaymentStatusObserved)
			wantCur := tt.wantCur
			if wantCur == "" {
				wantCur = "BRL"
			}
			if ev.Status != tt.wantStatus || ev.Currency != wantCur || ev.AmountCaptured != tt.wantCapture {
				t.Errorf("status %q currency %q captured %d; want %q %q %d", ev.Status, ev.Currency, ev.AmountCaptured, tt.wantStatus, wantCur, tt.wantCapture)
			}
			if tt.wantAt != "" {
				if want, _ := time.Parse(time.RFC3339Nano, tt.wantAt); !ev.OccurredAt.Equal(want) || ev.OccurredAt.Location() != time.UTC {
					t.Errorf("OccurredAt = %v, want %s in UTC", ev.OccurredAt, tt.wantAt)
				}
			}
			if _, err := json.Marshal(ev); err != nil {
				t.Errorf("event does not marshal: %v", err)
			}
		})
	}
}

// TestParseOrderStoredIDs: an order's events have distinct keys derived
// from (hook ID, charge ID), and the same order delivered again has the
// same keys, so a redelivery is deduplicated per charge.
func TestParseOrderStoredIDs(t *testing.T) {
	body, err := os.ReadFile("testdata/events/order.paid.two_charges.json")
	if err != nil {
		t.Fatal(err)
	}
	p := newProvider(t, Config{Secrets: []string{vectorSecret}})
	keys := func() []string {
		n, err := p.Parse(t.Context(), nil, nil, body)
		if err != nil {
			t.Fatal(err)
		}
		var ks []string
		for _, ev := range n.Events {
			m := ev.EventMeta()
			ks = append(ks, m.ProviderPaymentID+"/"+m.Key())
		}
		return ks
	}
	first := keys()
	want := []string{"ch_split00000000001/hook_M3orderpaid00:ch_split00000000001", "ch_split00000000002/hook_M3orderpaid00:ch_split00000000002"}
	if !reflect.DeepEqual(first, want) || !reflect.DeepEqual(keys(), first) {
		t.Fatalf("keys = %v, want %v both times", first, want)
	}
}

// TestCanceledUnpaidIsNotARefund: a charge cancelled before payment reports
// canceled_amount = amount; no money came in, so none went back. Found by
// paysim against the real ledger.
func TestCanceledUnpaidIsNotARefund(t *testing.T) {
	p, err := New(Config{Secrets: []string{"s"}})
	if err != nil {
		t.Fatal(err)
	}
	body := []byte(`{"id":"hook_c1","type":"charge.canceled","created_at":"2026-01-15T12:00:00Z","data":{"id":"ch_c1","amount":12358,"paid_amount":0,"canceled_amount":12358,"status":"canceled","currency":"BRL"}}`)
	n, err := p.Parse(t.Context(), nil, nil, body)
	if err != nil {
		t.Fatal(err)
	}
	ev := n.Events[0].(*domain.PaymentStatusObserved)
	if ev.Status != domain.StatusCancelled || ev.AmountRefunded != 0 || ev.AmountCaptured != 0 {
		t.Errorf("cancelled unpaid charge = %s captured %d refunded %d; want cancelled, 0, 0", ev.Status, ev.AmountCaptured, ev.AmountRefunded)
	}
}
