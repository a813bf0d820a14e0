package mercadopago

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers"
)

const opObserve = "mercadopago: observe"

// EventTypeAPIPayment is the ProviderEventType of observations fetched from
// GET /v1/payments/{id}.
const EventTypeAPIPayment = "api.payment"

// unknownStatusPrefix marks a status this package does not know. The
// prefixed value is not a valid domain.Status, so the fold flags the payment
// unknown_status for a human instead of guessing; the raw value stays in
// ProviderStatus. The prefix also keeps a future Mercado Pago status that
// happens to be spelt like one of ours ("confirmed") from passing as it.
const unknownStatusPrefix = "mp:"

// paymentAnswer holds the fields of a Mercado Pago payment that observe
// reads. Amounts are json.Number (the answer is decoded with UseNumber), so
// "100.10" is converted exactly; Mercado Pago's own Go SDK decodes them into
// float64.
type paymentAnswer struct {
	ID                        any         `json:"id"`
	Status                    string      `json:"status"`
	StatusDetail              string      `json:"status_detail"`
	TransactionAmount         json.Number `json:"transaction_amount"`
	TransactionAmountRefunded json.Number `json:"transaction_amount_refunded"`
	CurrencyID                string      `json:"currency_id"`
	DateLastUpdated           string      `json:"date_last_updated"`
	// FeeDetails is nil when the answer has no fee_details at all.
	FeeDetails []feeDetail `json:"fee_details"`
}

// feeDetail is one entry of fee_details.
type feeDetail struct {
	Type     string      `json:"type"`
	Amount   json.Number `json:"amount"`
	FeePayer string      `json:"fee_payer"`
}

// observe maps the API's answer about paymentID to an observation, stating
// the fee when the answer states one (see withFee). now stamps it when the
// answer has no date_last_updated.
func observe(body []byte, paymentID string, now time.Time) (*domain.PaymentStatusObserved, error) {
	obs, a, err := decodeAnswer(body, paymentID, now)
	if err != nil {
		return nil, err
	}
	if err := withFee(a, obs); err != nil {
		return nil, err
	}
	return obs, nil
}

// observeFacts is observe as the facts the answer states.
func observeFacts(body []byte, paymentID string, now time.Time) ([]domain.Event, error) {
	obs, err := observe(body, paymentID, now)
	if err != nil {
		return nil, err
	}
	return []domain.Event{obs}, nil
}

// decodeAnswer decodes the answer and maps it to an observation.
func decodeAnswer(body []byte, paymentID string, now time.Time) (*domain.PaymentStatusObserved, paymentAnswer, error) {
	var a paymentAnswer
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&a); err != nil {
		return nil, a, decodeError(opObserve, "payment answer", err)
	}
	if id, err := idString("id", a.ID); err != nil {
		return nil, a, err
	} else if id != "" && id != paymentID {
		return nil, a, invalid("the answer is about payment " + strconv.Quote(truncate(id)) + ", not " + strconv.Quote(truncate(paymentID)))
	}
	if err := checkID("status", a.Status); err != nil {
		return nil, a, err
	}
	cur, err := domain.NewCurrency(a.CurrencyID)
	if err != nil {
		return nil, a, invalid("currency_id: " + domain.MessageOf(err))
	}
	amount, err := minorUnits("transaction_amount", a.TransactionAmount, cur, true)
	if err != nil {
		return nil, a, err
	}
	refunded, err := minorUnits("transaction_amount_refunded", a.TransactionAmountRefunded, cur, false)
	if err != nil {
		return nil, a, err
	}
	occurred, updated := now.UTC(), ""
	if a.DateLastUpdated != "" {
		if occurred, err = parseTime("date_last_updated", a.DateLastUpdated); err != nil {
			return nil, a, err
		}
		updated = occurred.Format(time.RFC3339Nano)
	}
	status := mapStatus(a.Status, a.StatusDetail, amount, refunded)
	captured := int64(0)
	if moneyMoved(a.Status) {
		captured = amount
	}
	return &domain.PaymentStatusObserved{
		Meta: domain.Meta{
			Provider: ProviderName,
			// The same state fetched twice is one fact; any change is a new one.
			ProviderEventID:   providers.ObservationID(paymentID, a.Status, a.StatusDetail, strconv.FormatInt(refunded, 10), updated),
			ProviderEventType: EventTypeAPIPayment,
			ProviderPaymentID: paymentID,
			OccurredAt:        occurred,
		},
		Status:               status,
		ProviderStatus:       a.Status,
		ProviderStatusDetail: a.StatusDetail,
		Amount:               amount,
		AmountCaptured:       captured,
		AmountRefunded:       refunded,
		Currency:             cur,
	}, a, nil
}

// minorUnits converts a decimal amount exactly. An absent (or null) optional
// amount is zero; negative amounts are rejected, as Mercado Pago never sends
// one.
func minorUnits(field string, n json.Number, c domain.Currency, required bool) (int64, error) {
	if n == "" {
		if required {
			return 0, invalid(field + " is missing")
		}
		return 0, nil
	}
	v, err := domain.ParseMinorUnits(n.String(), c)
	switch {
	case err != nil:
		return 0, invalid(field + ": " + domain.MessageOf(err))
	case v < 0:
		return 0, invalid(field + " is negative")
	}
	return v, nil
}

// mapStatus maps Mercado Pago's status (and, for approved, its detail and
// refunded total) to ours. approved stays the status of a payment partly
// refunded, so status_detail partially_refunded or a refunded total between
// zero and the amount say so; a refunded total covering the whole amount
// while the status still reads approved is refunded.
func mapStatus(status, detail string, amount, refunded int64) domain.Status {
	switch status {
	case "pending", "in_process":
		// Whatever the detail (Pix or boleto unpaid, a challenge, review):
		// an attempt waits on the payer or on Mercado Pago.
		return domain.StatusAwaitingConfirmation
	case "authorized":
		return domain.StatusAuthorized
	case "approved":
		switch {
		case refunded > 0 && refunded >= amount:
			return domain.StatusRefunded
		case refunded > 0 || detail == "partially_refunded":
			return domain.StatusPartiallyRefunded
		}
		return domain.StatusConfirmed
	case "rejected":
		return domain.StatusFailed
	case "cancelled":
		return domain.StatusCancelled
	case "refunded":
		return domain.StatusRefunded
	case "in_mediation":
		return domain.StatusDisputed
	case "charged_back":
		return domain.StatusChargeback
	}
	return domain.Status(unknownStatusPrefix + status)
}

// moneyMoved reports whether a status means the amount was captured (and
// may since have been refunded, disputed or charged back).
func moneyMoved(status string) bool {
	switch status {
	case "approved", "refunded", "in_mediation", "charged_back":
		return true
	}
	return false
}
