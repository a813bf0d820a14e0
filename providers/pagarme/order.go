package pagarme

import (
	"encoding/json"
	"strconv"

	"github.com/payledger/payledger/domain"
)

// order holds the fields of a Pagar.me v5 order that the mapping reads.
type order struct {
	ID       string   `json:"id"`
	Status   string   `json:"status"`
	Currency string   `json:"currency"`
	Charges  []charge `json:"charges"`
}

// orderEvents maps an order.* event to one observation per charge, told apart
// by SubKey = charge ID, because each charge is a payment of its own. A charge
// without a status is mapped with the event type or the order's status as the
// hint; an order without charges is ignored.
func orderEvents(typ string, data json.RawMessage, meta domain.Meta) ([]domain.Event, string, error) {
	var o order
	if err := json.Unmarshal(data, &o); err != nil {
		return nil, "", decodeError("order", "data.", err)
	}
	if err := checkID("data.id", o.ID); err != nil {
		return nil, "", err
	}
	if err := checkStatus("data.status", o.Status); err != nil {
		return nil, "", err
	}
	cur, err := currency("data.currency", o.Currency, defaultCurrency)
	if err != nil {
		return nil, "", err
	}
	if len(o.Charges) == 0 {
		return nil, "order " + o.ID + " has no charges", nil
	}
	events := make([]domain.Event, 0, len(o.Charges))
	seen := make(map[string]bool, len(o.Charges))
	for i, c := range o.Charges {
		prefix := "data.charges[" + strconv.Itoa(i) + "]."
		hint := typ
		if c.Status == "" && chargeStatus(chargeFacts{typ: typ}) == "" && o.Status != "" {
			hint = "order." + o.Status
		}
		m := meta
		m.SubKey = c.ID
		ev, err := observe(c, hint, prefix, cur, m)
		if err != nil {
			return nil, "", err
		}
		if seen[c.ID] {
			return nil, "", invalid(prefix + "id " + quote(c.ID) + " appears twice in the order")
		}
		seen[c.ID] = true
		events = append(events, ev)
	}
	return events, "", nil
}
