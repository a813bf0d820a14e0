package stripe

import (
	"context"
	"encoding/json"

	"github.com/payledger/payledger/domain"
)

// dispute holds the Dispute fields payledger reads.
type dispute struct {
	ID            string       `json:"id"`
	Amount        *int64       `json:"amount"`
	Currency      string       `json:"currency"`
	Reason        string       `json:"reason"`
	Status        string       `json:"status"`
	PaymentIntent expandableID `json:"payment_intent"`
	Charge        expandableID `json:"charge"`
}

// disputeEvent maps charge.dispute.created and charge.dispute.closed to
// DisputeOpened (InquiryOpened for an inquiry) and DisputeClosed on the
// disputed PaymentIntent (found from the charge when the event names none).
func disputeEvent(ctx context.Context, typ string, object json.RawMessage, meta domain.Meta, r ChargeResolver) (domain.Event, string, error) {
	var dp dispute
	if err := json.Unmarshal(object, &dp); err != nil {
		return nil, "", decodeError("dispute object", "data.object.", err)
	}
	if err := checkID("data.object.id", dp.ID); err != nil {
		return nil, "", err
	}
	pi, ignored, err := intentOf(ctx, r, "dispute "+dp.ID, string(dp.PaymentIntent), string(dp.Charge))
	if pi == "" {
		return nil, ignored, err
	}
	amt, err := required("data.object.amount", dp.Amount)
	if err != nil {
		return nil, "", err
	}
	if err := checkAmounts(amount{"data.object.amount", amt}); err != nil {
		return nil, "", err
	}
	cur, err := currency("data.object.currency", dp.Currency)
	if err != nil {
		return nil, "", err
	}
	meta.ProviderPaymentID = pi
	if typ == "charge.dispute.created" {
		if isInquiry(dp.Status) {
			return &domain.InquiryOpened{Meta: meta, DisputeID: dp.ID, Amount: amt, Currency: cur, Reason: dp.Reason}, "", nil
		}
		return &domain.DisputeOpened{Meta: meta, DisputeID: dp.ID, Amount: amt, Currency: cur, Reason: dp.Reason}, "", nil
	}
	outcome, err := disputeOutcome(dp.Status)
	if err != nil {
		return nil, "", err
	}
	return &domain.DisputeClosed{Meta: meta, DisputeID: dp.ID, Outcome: outcome, Amount: amt, Currency: cur}, "", nil
}

// disputeOutcome maps a closed dispute's status: only "lost" loses the money;
// won, warning_closed (an inquiry that never became a chargeback) and
// prevented all end in the merchant's favour. A closed dispute without a
// status is malformed: guessing "won" would hide a chargeback.
func disputeOutcome(status string) (domain.DisputeOutcome, error) {
	switch status {
	case "":
		return "", invalid("data.object.status is missing on a closed dispute")
	case "lost":
		return domain.DisputeLost, nil
	}
	return domain.DisputeWon, nil
}

// isInquiry reports whether a dispute's status is that of an inquiry (a
// "warning" dispute): the bank asks questions but withdraws nothing. Its
// charge.dispute.closed (warning_closed) maps to DisputeClosed won, which
// the fold reads as the inquiry's end.
func isInquiry(status string) bool {
	return status == "warning_needs_response" || status == "warning_under_review"
}
