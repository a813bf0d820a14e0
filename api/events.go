package api

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// eventView is one stored event as the auditor sees it: the stored payload
// untouched, where it came from, and the payment state it led to.
type eventView struct {
	EventID         string          `json:"event_id"`
	ProviderEventID string          `json:"provider_event_id"`
	Type            string          `json:"type"`
	OccurredAt      string          `json:"occurred_at"`
	RecordedAt      string          `json:"recorded_at"`
	Revision        uint64          `json:"revision"`
	Data            json.RawMessage `json:"data"`
	Metadata        metadataView    `json:"metadata"`
	StateAfter      paymentView     `json:"state_after"`
}

// metadataView is what an auditor needs to re-verify the delivery: the
// exact body (base64, so any byte survives) and the signature header.
type metadataView struct {
	ReceivedAt        string `json:"received_at"`
	ProviderEventType string `json:"provider_event_type"`
	SignatureHeader   string `json:"signature_header"`
	RawBody           string `json:"raw_body"`
	RequestID         string `json:"request_id"`
	// Source is how the fact reached the store (webhook, api, backfill);
	// "" for facts stored before it was recorded.
	Source string `json:"source"`
}

type eventList struct {
	Stream string      `json:"stream"`
	Events []eventView `json:"events"`
}

// listEvents serves GET /v1/payments/{provider}/{provider_payment_id}/events
// from the event store, the source of truth, not from the read models: an
// auditor must see what was recorded even if a projection is behind or wrong.
// With as_of, only the facts that view folds are listed.
func (s *Server) listEvents(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	at, err := parseAsOf("api: list events", r.URL.Query())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	recs, evs, err := s.facts(r.Context(), v["provider"], v["provider_payment_id"], at)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	views, err := viewEvents(recs, evs)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, eventList{Stream: eventstore.PaymentStream(v["provider"], v["provider_payment_id"]), Events: views})
}

// viewEvents folds the decoded events in stream order with the domain's
// own Evolve, so each state_after is what the ledger concluded once that
// event was known.
func viewEvents(recs []eventstore.RecordedEvent, evs []domain.Event) ([]eventView, error) {
	views := make([]eventView, 0, len(recs))
	var p domain.Payment
	for i, rec := range recs {
		e := evs[i]
		md, err := eventstore.DecodeMetadata(rec.Metadata)
		if err != nil {
			return nil, fmt.Errorf("api: read %s at %d: %w", rec.Stream, rec.Revision, err)
		}
		p = domain.Evolve(p, e)
		m := e.EventMeta()
		views = append(views, eventView{
			EventID:         rec.ID.String(),
			ProviderEventID: m.ProviderEventID,
			Type:            rec.Type,
			OccurredAt:      formatTime(m.OccurredAt),
			RecordedAt:      formatTime(rec.RecordedAt),
			Revision:        rec.Revision,
			Data:            json.RawMessage(rec.Data),
			Metadata: metadataView{
				ReceivedAt:        formatTime(md.ReceivedAt),
				ProviderEventType: md.ProviderEventType,
				SignatureHeader:   md.SignatureHeader,
				RawBody:           base64.StdEncoding.EncodeToString(md.RawBody),
				RequestID:         md.RequestID,
				Source:            md.Source,
			},
			StateAfter: viewPayment(p.State()),
		})
	}
	return views, nil
}
