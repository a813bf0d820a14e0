package api

import (
	"time"

	"github.com/payledger/payledger/domain"
)

// paymentView is the JSON shape of a payment, shared by the payment, list
// and events endpoints so a client parses one object everywhere.
type paymentView struct {
	Provider          string           `json:"provider"`
	ProviderPaymentID string           `json:"provider_payment_id"`
	Status            domain.Status    `json:"status"`
	Amount            int64            `json:"amount"`
	Currency          domain.Currency  `json:"currency"`
	AmountCaptured    int64            `json:"amount_captured"`
	AmountRefunded    int64            `json:"amount_refunded"`
	AmountDisputed    int64            `json:"amount_disputed"`
	Fee               int64            `json:"fee"`
	FeeCurrency       *domain.Currency `json:"fee_currency"` // null until a fee is stated
	CreatedAt         string           `json:"created_at"`
	UpdatedAt         string           `json:"updated_at"`
	EventCount        int              `json:"event_count"`
	ReviewReasons     []string         `json:"review_reasons"`
	RequiresReview    bool             `json:"requires_review"`
	// Projection is "parked" when the projector parked the payment (the
	// read model may be behind its stream), else "live".
	Projection string `json:"projection"`
}

func viewPayment(p domain.PaymentState) paymentView {
	reasons := p.ReviewReasons
	if reasons == nil {
		reasons = []string{} // always an array, never null
	}
	var feeCurrency *domain.Currency
	if p.FeeCurrency != "" {
		feeCurrency = &p.FeeCurrency
	}
	return paymentView{
		Provider:          p.Provider,
		ProviderPaymentID: p.ProviderPaymentID,
		Status:            p.Status,
		Amount:            p.Amount,
		Currency:          p.Currency,
		AmountCaptured:    p.AmountCaptured,
		AmountRefunded:    p.AmountRefunded,
		AmountDisputed:    p.AmountDisputed,
		Fee:               p.Fee,
		FeeCurrency:       feeCurrency,
		CreatedAt:         formatTime(p.CreatedAt),
		UpdatedAt:         formatTime(p.UpdatedAt),
		EventCount:        p.EventCount,
		ReviewReasons:     reasons,
		RequiresReview:    p.RequiresReview,
		Projection:        projectionOf(p.Parked),
	}
}

func projectionOf(parked bool) string {
	if parked {
		return "parked"
	}
	return "live"
}

// formatTime renders t as RFC 3339 in UTC, with fractional seconds only
// when t has them (provider timestamps are whole seconds).
func formatTime(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}
