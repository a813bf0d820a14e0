package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/providers/providertest"
)

// fakeStore is an EventStore whose behaviour each test supplies.
type fakeStore struct {
	AppendFn     func(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) (eventstore.AppendResult, error)
	ReadStreamFn func(ctx context.Context, stream string) ([]eventstore.RecordedEvent, error)
}

var _ EventStore = (*fakeStore)(nil)

func (f *fakeStore) Append(ctx context.Context, stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) (eventstore.AppendResult, error) {
	if f.AppendFn == nil {
		return eventstore.AppendResult{}, errors.New("fake store: unexpected Append")
	}
	return f.AppendFn(ctx, stream, expected, events)
}

func (f *fakeStore) ReadStream(ctx context.Context, stream string) ([]eventstore.RecordedEvent, error) {
	if f.ReadStreamFn == nil {
		return nil, errors.New("fake store: unexpected ReadStream")
	}
	return f.ReadStreamFn(ctx, stream)
}

// memStore is a fakeStore over an in-memory map that honours the
// eventstore.Store contract the API relies on: whole-batch appends and
// duplicate detection by event ID. It records every append call.
type memStore struct {
	fakeStore
	mu      sync.Mutex
	streams map[string][]eventstore.RecordedEvent
	calls   []appendCall
}

type appendCall struct {
	stream   string
	expected eventstore.ExpectedRevision
	events   []eventstore.EventData
}

func newMemStore() *memStore {
	m := &memStore{streams: map[string][]eventstore.RecordedEvent{}}
	m.AppendFn = m.append
	m.ReadStreamFn = m.read
	return m
}

func (m *memStore) append(_ context.Context, stream string, expected eventstore.ExpectedRevision, events []eventstore.EventData) (eventstore.AppendResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.calls = append(m.calls, appendCall{stream: stream, expected: expected, events: events})
	recs := m.streams[stream]
	for _, e := range events {
		for _, r := range recs {
			if r.ID == e.ID {
				return eventstore.AppendResult{Duplicate: true, Revision: r.Revision}, nil
			}
		}
	}
	for _, e := range events {
		recs = append(recs, eventstore.RecordedEvent{ID: e.ID, Stream: stream, Revision: uint64(len(recs)),
			Type: e.Type, Data: e.Data, Metadata: e.Metadata, RecordedAt: testNow.Add(time.Second)})
	}
	m.streams[stream] = recs
	return eventstore.AppendResult{Revision: uint64(len(recs) - 1)}, nil
}

func (m *memStore) read(_ context.Context, stream string) ([]eventstore.RecordedEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]eventstore.RecordedEvent(nil), m.streams[stream]...), nil
}

func (m *memStore) appendCalls() []appendCall {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]appendCall(nil), m.calls...)
}

// fakeReader is a PaymentReader whose behaviour each test supplies.
type fakeReader struct {
	PaymentFn      func(ctx context.Context, provider, providerPaymentID string) (domain.PaymentState, error)
	ListPaymentsFn func(ctx context.Context, f domain.PaymentFilter) (domain.PaymentPage, error)
}

var _ PaymentReader = (*fakeReader)(nil)

func (f *fakeReader) Payment(ctx context.Context, provider, providerPaymentID string) (domain.PaymentState, error) {
	if f.PaymentFn == nil {
		return domain.PaymentState{}, errors.New("fake reader: unexpected Payment")
	}
	return f.PaymentFn(ctx, provider, providerPaymentID)
}

func (f *fakeReader) ListPayments(ctx context.Context, filter domain.PaymentFilter) (domain.PaymentPage, error) {
	if f.ListPaymentsFn == nil {
		return domain.PaymentPage{}, errors.New("fake reader: unexpected ListPayments")
	}
	return f.ListPaymentsFn(ctx, filter)
}

// fakeLedger is a LedgerReader whose behaviour each test supplies. It
// records every query it is given, so tests check what the handlers parsed.
type fakeLedger struct {
	BalancesFn      func(ctx context.Context, q domain.BalanceQuery) ([]domain.AccountBalance, error)
	DailyFn         func(ctx context.Context, q domain.DailyQuery) ([]domain.DayBalance, error)
	EntriesFn       func(ctx context.Context, q domain.EntryQuery) (domain.EntryPage, error)
	PaymentLedgerFn func(ctx context.Context, provider, providerPaymentID string) ([]domain.LedgerEntry, error)

	mu        sync.Mutex
	balanceQs []domain.BalanceQuery
	dailyQs   []domain.DailyQuery
	entryQs   []domain.EntryQuery
}

var _ LedgerReader = (*fakeLedger)(nil)

func (f *fakeLedger) Balances(ctx context.Context, q domain.BalanceQuery) ([]domain.AccountBalance, error) {
	f.mu.Lock()
	f.balanceQs = append(f.balanceQs, q)
	f.mu.Unlock()
	if f.BalancesFn == nil {
		return nil, errors.New("fake ledger: unexpected Balances")
	}
	return f.BalancesFn(ctx, q)
}

func (f *fakeLedger) Daily(ctx context.Context, q domain.DailyQuery) ([]domain.DayBalance, error) {
	f.mu.Lock()
	f.dailyQs = append(f.dailyQs, q)
	f.mu.Unlock()
	if f.DailyFn == nil {
		return nil, errors.New("fake ledger: unexpected Daily")
	}
	return f.DailyFn(ctx, q)
}

func (f *fakeLedger) Entries(ctx context.Context, q domain.EntryQuery) (domain.EntryPage, error) {
	f.mu.Lock()
	f.entryQs = append(f.entryQs, q)
	f.mu.Unlock()
	if f.EntriesFn == nil {
		return domain.EntryPage{}, errors.New("fake ledger: unexpected Entries")
	}
	return f.EntriesFn(ctx, q)
}

func (f *fakeLedger) PaymentLedger(ctx context.Context, provider, providerPaymentID string) ([]domain.LedgerEntry, error) {
	if f.PaymentLedgerFn == nil {
		return nil, errors.New("fake ledger: unexpected PaymentLedger")
	}
	return f.PaymentLedgerFn(ctx, provider, providerPaymentID)
}

// calls returns how many queries of each kind the fake was given.
func (f *fakeLedger) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.balanceQs) + len(f.dailyQs) + len(f.entryQs)
}

// fakeProvider is a Provider whose behaviour each test supplies.
type fakeProvider struct {
	name     string
	VerifyFn func(ctx context.Context, header http.Header, query url.Values, body []byte, now time.Time) error
	ParseFn  func(ctx context.Context, header http.Header, query url.Values, body []byte) (domain.Notification, error)
}

var _ Provider = (*fakeProvider)(nil)

// The providers' contract suite declares its own copy of Provider and
// SourceChecker (providers must not import api); these keep them identical.
var (
	_ Provider                   = providertest.Provider(nil)
	_ providertest.Provider      = Provider(nil)
	_ SourceChecker              = providertest.SourceChecker(nil)
	_ providertest.SourceChecker = SourceChecker(nil)
)

func (p *fakeProvider) Name() string { return p.name }

func (p *fakeProvider) Verify(ctx context.Context, header http.Header, query url.Values, body []byte, now time.Time) error {
	return p.VerifyFn(ctx, header, query, body, now)
}

func (p *fakeProvider) Parse(ctx context.Context, header http.Header, query url.Values, body []byte) (domain.Notification, error) {
	return p.ParseFn(ctx, header, query, body)
}

// The fake provider "fakepay" signs like Stripe, in miniature:
// Fakepay-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "t.body")>,
// accepted within fakeTolerance of the server's clock.
const (
	fakeName      = "fakepay"
	fakeSigHeader = "Fakepay-Signature"
	fakeSecret    = "whsec_test_secret"
	fakeTolerance = 5 * time.Minute
)

func fakeSign(secret string, t time.Time, body []byte) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(ts + "."))
	mac.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(mac.Sum(nil))
}

func newFakepay(secret string) *fakeProvider {
	return &fakeProvider{name: fakeName, VerifyFn: fakeVerify(secret), ParseFn: fakeParse}
}

func fakeVerify(secret string) func(context.Context, http.Header, url.Values, []byte, time.Time) error {
	const op = "fakepay: verify"
	return func(_ context.Context, h http.Header, _ url.Values, body []byte, now time.Time) error {
		sig := h.Get(fakeSigHeader)
		if sig == "" {
			return domain.Invalid(op, "missing signature header", nil)
		}
		tPart, vPart, ok := strings.Cut(sig, ",")
		ts, okT := strings.CutPrefix(tPart, "t=")
		v1, okV := strings.CutPrefix(vPart, "v1=")
		unix, err := strconv.ParseInt(ts, 10, 64)
		if !ok || !okT || !okV || err != nil {
			return domain.Invalid(op, "malformed signature header", err)
		}
		want := fakeSign(secret, time.Unix(unix, 0), body)
		if !hmac.Equal([]byte(want), []byte(sig)) || v1 == "" {
			return domain.Invalid(op, "signature mismatch", nil)
		}
		if d := now.Sub(time.Unix(unix, 0)); d > fakeTolerance || d < -fakeTolerance {
			return domain.Invalid(op, "timestamp outside tolerance", nil)
		}
		return nil
	}
}

// fakeDelivery is the fakepay payload: one provider event that may carry
// facts about several payments.
type fakeDelivery struct {
	ID     string      `json:"id"`
	Type   string      `json:"type"`
	Events []fakeEvent `json:"events"`
}

type fakeEvent struct {
	Kind     string `json:"kind"` // created, succeeded, refunded, failed, disputed; else a nil event
	Provider string `json:"provider,omitempty"`
	Payment  string `json:"payment"`
	Sub      string `json:"sub,omitempty"`
	Amount   int64  `json:"amount"`
	Currency string `json:"currency"`
	At       int64  `json:"at"`
}

// fakeParse maps a delivery to domain events. A delivery without events is
// ignored, as a provider does with types it does not track.
func fakeParse(_ context.Context, h http.Header, _ url.Values, body []byte) (domain.Notification, error) {
	var d fakeDelivery
	if err := json.Unmarshal(body, &d); err != nil {
		return domain.Notification{}, domain.Invalid("fakepay: parse", "payload is not JSON", err)
	}
	n := domain.Notification{Provider: fakeName, ProviderEventID: d.ID, ProviderEventType: d.Type,
		SignatureHeader: h.Get(fakeSigHeader)}
	if len(d.Events) == 0 {
		n.IgnoredReason = fmt.Sprintf("type %q not tracked", d.Type)
	}
	for _, fe := range d.Events {
		n.Events = append(n.Events, fe.event(d))
	}
	return n, nil
}

func (fe fakeEvent) event(d fakeDelivery) domain.Event {
	provider := fe.Provider
	if provider == "" {
		provider = fakeName
	}
	m := domain.Meta{Provider: provider, ProviderEventID: d.ID, SubKey: fe.Sub, ProviderEventType: d.Type,
		ProviderPaymentID: fe.Payment, OccurredAt: time.Unix(fe.At, 0).UTC()}
	c := domain.Currency(strings.ToUpper(fe.Currency))
	switch fe.Kind {
	case "created":
		return &domain.PaymentCreated{Meta: m, Amount: fe.Amount, Currency: c}
	case "succeeded":
		return &domain.PaymentSucceeded{Meta: m, Amount: fe.Amount, AmountReceived: fe.Amount, Currency: c}
	case "refunded":
		return &domain.PaymentRefunded{Meta: m, AmountRefunded: fe.Amount, AmountCaptured: 0, Currency: c}
	case "failed":
		return &domain.PaymentFailed{Meta: m, Amount: fe.Amount, Currency: c, Code: "card_declined"}
	case "disputed":
		return &domain.DisputeOpened{Meta: m, DisputeID: "dp_" + fe.Payment, Amount: fe.Amount, Currency: c}
	}
	return nil
}

// fakeRecon is a ReconciliationReader whose behaviour each test supplies.
// It records every query it is given.
type fakeRecon struct {
	ChecksFn  func(ctx context.Context, q domain.CheckQuery) (domain.CheckPage, error)
	SummaryFn func(ctx context.Context, since, quietSince time.Time) (domain.ReconciliationSummary, error)

	mu        sync.Mutex
	checkQs   []domain.CheckQuery
	summaryQs [][2]time.Time
}

var _ ReconciliationReader = (*fakeRecon)(nil)

func (f *fakeRecon) Checks(ctx context.Context, q domain.CheckQuery) (domain.CheckPage, error) {
	f.mu.Lock()
	f.checkQs = append(f.checkQs, q)
	f.mu.Unlock()
	if f.ChecksFn == nil {
		return domain.CheckPage{}, errors.New("fake reconciliation: unexpected Checks")
	}
	return f.ChecksFn(ctx, q)
}

func (f *fakeRecon) ReconciliationSummary(ctx context.Context, since, quietSince time.Time) (domain.ReconciliationSummary, error) {
	f.mu.Lock()
	f.summaryQs = append(f.summaryQs, [2]time.Time{since, quietSince})
	f.mu.Unlock()
	if f.SummaryFn == nil {
		return domain.ReconciliationSummary{}, errors.New("fake reconciliation: unexpected ReconciliationSummary")
	}
	return f.SummaryFn(ctx, since, quietSince)
}

func (f *fakeRecon) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.checkQs) + len(f.summaryQs)
}

// fakeEnqueuer is a ReconcileEnqueuer whose behaviour each test supplies.
type fakeEnqueuer struct {
	EnqueueFn func(ctx context.Context, provider, providerPaymentID string) (int64, error)

	mu    sync.Mutex
	asked []string // provider/id
}

var _ ReconcileEnqueuer = (*fakeEnqueuer)(nil)

func (f *fakeEnqueuer) EnqueueReconcile(ctx context.Context, provider, providerPaymentID string) (int64, error) {
	f.mu.Lock()
	f.asked = append(f.asked, provider+"/"+providerPaymentID)
	f.mu.Unlock()
	if f.EnqueueFn == nil {
		return 0, errors.New("fake enqueuer: unexpected EnqueueReconcile")
	}
	return f.EnqueueFn(ctx, provider, providerPaymentID)
}

func (f *fakeEnqueuer) calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.asked...)
}
