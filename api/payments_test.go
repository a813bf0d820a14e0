package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

var samplePayment = domain.PaymentState{
	Provider: "stripe", ProviderPaymentID: "pi_3Mtw-Bq_2eZvKYlo", Status: domain.StatusPartiallyRefunded,
	Currency: "USD", Amount: 2000, AmountCaptured: 2000, AmountRefunded: 500,
	CreatedAt:  time.Date(2025, 2, 1, 10, 0, 0, 0, time.FixedZone("BRT", -3*3600)),
	UpdatedAt:  time.Date(2025, 2, 1, 13, 30, 0, 0, time.UTC),
	EventCount: 3,
}

func TestGetPayment(t *testing.T) {
	env := newEnv(t)
	var gotProvider, gotID string
	env.deps.Payments = &fakeReader{PaymentFn: func(_ context.Context, provider, id string) (domain.PaymentState, error) {
		gotProvider, gotID = provider, id
		if id != samplePayment.ProviderPaymentID {
			return domain.PaymentState{}, fmt.Errorf("projections: payment %s: %w", id, domain.ErrUnknownPayment)
		}
		return samplePayment, nil
	}}
	srv := env.server(t)

	res := serve(t, srv, get("/v1/payments/stripe/pi_3Mtw-Bq_2eZvKYlo", readToken))
	if res.status != 200 || gotProvider != "stripe" || gotID != "pi_3Mtw-Bq_2eZvKYlo" {
		t.Fatalf("status %d (reader got %s/%s): %s", res.status, gotProvider, gotID, res.raw)
	}
	want := map[string]any{
		"provider": "stripe", "provider_payment_id": "pi_3Mtw-Bq_2eZvKYlo", "status": "partially_refunded",
		"amount": 2000.0, "currency": "USD", "amount_captured": 2000.0, "amount_refunded": 500.0, "amount_disputed": 0.0,
		"fee": 0.0, "fee_currency": nil,
		"created_at": "2025-02-01T13:00:00Z", "updated_at": "2025-02-01T13:30:00Z", "event_count": 3.0,
		"review_reasons": []any{}, "requires_review": false, "projection": "live",
	}
	if !reflect.DeepEqual(res.body, want) {
		t.Errorf("body = %v\nwant %v", res.body, want)
	}

	missing := serve(t, srv, get("/v1/payments/stripe/pi_nope", readToken))
	if missing.status != 404 || missing.errorCode() != "not_found" || missing.errorMessage() != "unknown payment" {
		t.Errorf("unknown payment: %d %s", missing.status, missing.raw)
	}
}

func TestGetPaymentReaderDown(t *testing.T) {
	env := newEnv(t)
	env.deps.Payments = &fakeReader{PaymentFn: func(context.Context, string, string) (domain.PaymentState, error) {
		return domain.PaymentState{}, domain.Unavailable("projections: payment", "database down", errors.New("dial tcp 10.0.0.7:5432: refused"))
	}}
	res := serve(t, env.server(t), get("/v1/payments/stripe/pi_1", readToken))
	if res.status != 503 || res.errorMessage() != msgUnavailable {
		t.Errorf("got %d %s", res.status, res.raw)
	}
}

func TestListPayments(t *testing.T) {
	env := newEnv(t)
	var got domain.PaymentFilter
	reviewed := samplePayment
	reviewed.ProviderPaymentID, reviewed.ReviewReasons = "pi_2", []string{domain.ReviewRefundExceedsCapture}
	env.deps.Payments = &fakeReader{ListPaymentsFn: func(_ context.Context, f domain.PaymentFilter) (domain.PaymentPage, error) {
		got = f
		if f.Cursor == "last" {
			return domain.PaymentPage{}, nil
		}
		return domain.PaymentPage{Payments: []domain.PaymentState{samplePayment, reviewed}, NextCursor: "c2"}, nil
	}}
	srv := env.server(t)

	res := serve(t, srv, get("/v1/payments?provider=stripe&status=refunded&limit=2&cursor=c1", readToken))
	if res.status != 200 {
		t.Fatalf("status %d: %s", res.status, res.raw)
	}
	if want := (domain.PaymentFilter{Provider: "stripe", Status: domain.StatusRefunded, Limit: 2, Cursor: "c1"}); got != want {
		t.Errorf("filter = %+v, want %+v", got, want)
	}
	var body struct {
		Payments   []paymentView `json:"payments"`
		NextCursor *string       `json:"next_cursor"`
	}
	if err := json.Unmarshal(res.raw, &body); err != nil {
		t.Fatal(err)
	}
	if len(body.Payments) != 2 || body.NextCursor == nil || *body.NextCursor != "c2" ||
		!reflect.DeepEqual(body.Payments[1].ReviewReasons, []string{"refund_exceeds_capture"}) {
		t.Errorf("body = %s", res.raw)
	}

	last := serve(t, srv, get("/v1/payments?cursor=last&limit=", readToken))
	if last.status != 200 || string(last.raw) != `{"payments":[],"next_cursor":""}`+"\n" {
		t.Errorf("last page = %d %s", last.status, last.raw)
	}
	if want := (domain.PaymentFilter{Cursor: "last"}); got != want {
		t.Errorf("filter = %+v, want %+v (empty limit means default)", got, want)
	}
}

func TestListPaymentsValidation(t *testing.T) {
	for _, q := range []string{
		"status=paid", "status=PENDING", "limit=0", "limit=-1", "limit=501", "limit=abc", "limit=1.5",
		"limit=99999999999999999999", "status=pending&status=failed", "limit=1&limit=2",
		"created_from=yesterday", "created_from=2026-03-02T00:00:00Z&created_to=2026-03-01T00:00:00Z", "min_amount=100",
		"currency=US&min_amount=1", "currency=USD&min_amount=-1", "currency=USD&max_amount=1.5", "currency=USD&min_amount=9&max_amount=8",
		"created_to=2026-03-01T00:00:00Z&created_to=2026-03-02T00:00:00Z",
	} {
		t.Run(q, func(t *testing.T) {
			env := newEnv(t)
			env.deps.Payments = &fakeReader{} // any call fails the request with a 500
			res := serve(t, env.server(t), get("/v1/payments?"+q, readToken))
			if res.status != 400 || res.errorCode() != "invalid" || res.errorMessage() == "" {
				t.Errorf("got %d %s, want 400 invalid with a message", res.status, res.raw)
			}
		})
	}
	for _, q := range []string{"limit=1", "limit=500", "status=chargeback", "status=partially_refunded",
		"created_from=2026-03-01T00:00:00Z&created_to=2026-03-01T00:00:00.5Z", "currency=brl&min_amount=0&max_amount=100"} {
		t.Run(q, func(t *testing.T) {
			env := newEnv(t)
			env.deps.Payments = &fakeReader{ListPaymentsFn: func(context.Context, domain.PaymentFilter) (domain.PaymentPage, error) {
				return domain.PaymentPage{}, nil
			}}
			if res := serve(t, env.server(t), get("/v1/payments?"+q, readToken)); res.status != 200 {
				t.Errorf("got %d %s, want 200", res.status, res.raw)
			}
		})
	}
}

func TestListPaymentsBadCursor(t *testing.T) {
	env := newEnv(t)
	env.deps.Payments = &fakeReader{ListPaymentsFn: func(context.Context, domain.PaymentFilter) (domain.PaymentPage, error) {
		return domain.PaymentPage{}, fmt.Errorf("projections: list: %w", domain.Invalid("projections: cursor", "malformed cursor", errors.New("base64")))
	}}
	res := serve(t, env.server(t), get("/v1/payments?cursor=%25%25", readToken))
	if res.status != 400 || res.errorMessage() != "malformed cursor" {
		t.Errorf("got %d %s", res.status, res.raw)
	}
}

// A stated fee shows in its own currency (a Stripe balance transaction may
// settle in another one than the payment's).
func TestGetPaymentFee(t *testing.T) {
	env := newEnv(t)
	withFee := samplePayment
	withFee.Fee, withFee.FeeCurrency = 94, "BRL"
	env.deps.Payments = &fakeReader{PaymentFn: func(context.Context, string, string) (domain.PaymentState, error) {
		return withFee, nil
	}}
	res := serve(t, env.server(t), get("/v1/payments/stripe/pi_3Mtw-Bq_2eZvKYlo", readToken))
	if res.status != 200 || res.body["fee"] != 94.0 || res.body["fee_currency"] != "BRL" || res.body["currency"] != "USD" {
		t.Errorf("got %d %s", res.status, res.raw)
	}
}
