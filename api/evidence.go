package api

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"

	"github.com/gorilla/mux"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// Authenticator re-verifies a stored delivery now, for authenticity only
// (the four adapters: Authenticate, and KeptHeaders for facts kept before
// their headers were).
type Authenticator interface {
	HeaderKeeper
	Authenticate(header http.Header, query url.Values, body []byte, proof domain.AuthProof) domain.Authenticity
}

// SealReader reads the chain seals of a stream (projections.Queries).
type SealReader interface {
	StreamSeals(ctx context.Context, stream string) ([]eventstore.Seal, error)
}

// evidenceView is GET /v1/payments/{provider}/{id}/evidence: every stored
// fact of the payment with its delivery as received, its re-verification
// computed now, and its place in the stream's hash chain.
type evidenceView struct {
	Provider          string         `json:"provider"`
	ProviderPaymentID string         `json:"provider_payment_id"`
	Stream            string         `json:"stream"`
	GeneratedAt       string         `json:"generated_at"`
	ChainSeed         string         `json:"chain_seed"`
	Facts             []evidenceFact `json:"facts"`
}

type evidenceFact struct {
	Revision        uint64              `json:"revision"`
	EventID         string              `json:"event_id"`
	Type            string              `json:"type"`
	ProviderEventID string              `json:"provider_event_id"`
	OccurredAt      string              `json:"occurred_at"`
	RecordedAt      string              `json:"recorded_at"`
	Source          string              `json:"source"`
	Delivery        evidenceDelivery    `json:"delivery"`
	Verification    domain.Authenticity `json:"verification"`
	Chain           evidenceChain       `json:"chain"`
}

// evidenceDelivery is the delivery as received. For a fact fetched from the
// provider's API, Body is the API's answer.
type evidenceDelivery struct {
	Body       string            `json:"body"` // base64 of the exact bytes
	Headers    map[string]string `json:"headers"`
	Query      string            `json:"query"`
	ReceivedAt string            `json:"received_at"`
	RequestID  string            `json:"request_id"`
}

// evidenceChain is the fact's link: Hash is ChainHash(Previous, the event
// as stored now); Sealed the hash the sealer recorded; Intact whether they
// agree and the previous link did.
type evidenceChain struct {
	Previous string  `json:"previous"`
	Hash     string  `json:"hash"`
	Sealed   *string `json:"sealed"` // null: not sealed yet
	SealedAt *string `json:"sealed_at"`
	Backfill bool    `json:"backfill"`
	Intact   *bool   `json:"intact"` // null while not sealed
}

// getEvidence serves GET /v1/payments/{provider}/{provider_payment_id}/evidence.
func (s *Server) getEvidence(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	if err := checkParams("api: evidence", r.URL.Query(), nil); err != nil {
		s.writeError(w, r, err)
		return
	}
	recs, evs, err := s.facts(r.Context(), v["provider"], v["provider_payment_id"], asOf{})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	stream := eventstore.PaymentStream(v["provider"], v["provider_payment_id"])
	seals, err := s.seals.StreamSeals(r.Context(), stream)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := evidenceView{Provider: v["provider"], ProviderPaymentID: v["provider_payment_id"], Stream: stream,
		GeneratedAt: formatTime(s.cfg.Now()), ChainSeed: hex.EncodeToString(eventstore.ChainSeed[:]), Facts: make([]evidenceFact, 0, len(recs))}
	prev, intact := eventstore.ChainSeed, true
	for i, rec := range recs {
		f, err := s.evidenceFact(v["provider"], rec, evs[i])
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		prev, intact = chainLink(&f, rec, prev, intact, seals)
		out.Facts = append(out.Facts, f)
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

func (s *Server) evidenceFact(provider string, rec eventstore.RecordedEvent, e domain.Event) (evidenceFact, error) {
	md, err := eventstore.DecodeMetadata(rec.Metadata)
	if err != nil {
		return evidenceFact{}, fmt.Errorf("api: evidence %s at %d: %w", rec.Stream, rec.Revision, err)
	}
	m := e.EventMeta()
	headers := md.AuthHeaders
	if headers == nil {
		headers = map[string]string{}
	}
	return evidenceFact{Revision: rec.Revision, EventID: rec.ID.String(), Type: rec.Type, ProviderEventID: m.ProviderEventID,
		OccurredAt: formatTime(m.OccurredAt), RecordedAt: formatTime(rec.RecordedAt), Source: md.Source,
		Delivery: evidenceDelivery{Body: base64.StdEncoding.EncodeToString(md.RawBody), Headers: headers, Query: md.Query,
			ReceivedAt: formatTime(md.ReceivedAt), RequestID: md.RequestID},
		Verification: s.reverify(provider, e, md)}, nil
}

// reverify re-computes a fact's authenticity now. Only a delivery that
// came signed can be checked; the others say why not.
func (s *Server) reverify(provider string, e domain.Event, md eventstore.Metadata) domain.Authenticity {
	unverifiable := func(reason string) domain.Authenticity {
		return domain.Authenticity{Result: domain.AuthUnverifiable, Reason: reason}
	}
	switch {
	case domain.IsOwnFact(e):
		return unverifiable("payledger's own fact (a check or a review), not a provider's delivery: its metadata says who made it")
	case md.Source != "" && md.Source != eventstore.SourceWebhook:
		return unverifiable("fetched from the provider's API (source " + md.Source + "): API answers are not signed; TLS vouched for them in transit")
	case len(md.RawBody) == 0:
		return unverifiable("the delivery's body was not kept")
	}
	a, ok := s.providers[provider].(Authenticator)
	if !ok {
		return unverifiable("provider " + provider + " is not configured in this process, so none of its secrets can check it")
	}
	query, err := url.ParseQuery(md.Query)
	if err != nil {
		return domain.Authenticity{Result: domain.AuthFailed, Reason: "the kept query does not parse"}
	}
	var proof domain.AuthProof
	if md.Proof != nil {
		proof = *md.Proof
	}
	if md.AuthHeaders != nil || md.SignatureHeader == "" {
		return a.Authenticate(headerOf(md.AuthHeaders), query, md.RawBody, proof)
	}
	// A fact kept before its headers were: its one signature header, under
	// whichever of the adapter's names it verifies as.
	best := unverifiable("no signature header was kept with the fact")
	for _, name := range a.KeptHeaders() {
		got := a.Authenticate(headerOf(map[string]string{name: md.SignatureHeader}), query, md.RawBody, proof)
		if rank(got.Result) > rank(best.Result) {
			best = got
		}
	}
	return best
}

func headerOf(m map[string]string) http.Header {
	h := make(http.Header, len(m))
	for k, v := range m {
		h.Set(k, v)
	}
	return h
}

// rank orders results for a legacy fact tried under several header names.
func rank(r domain.AuthResult) int {
	switch r {
	case domain.AuthVerified:
		return 3
	case domain.AuthVerifiedRotated:
		return 2
	case domain.AuthUnverifiable:
		return 1
	}
	return 0
}

// chainLink fills f's chain from the event as stored now and its seal, and
// returns the hash the next event chains from and whether the chain is
// intact so far.
func chainLink(f *evidenceFact, rec eventstore.RecordedEvent, prev [32]byte, intact bool, seals []eventstore.Seal) ([32]byte, bool) {
	h := eventstore.ChainHash(prev, rec)
	f.Chain = evidenceChain{Previous: hex.EncodeToString(prev[:]), Hash: hex.EncodeToString(h[:])}
	for _, seal := range seals {
		if seal.Revision != rec.Revision {
			continue
		}
		sealed, at := hex.EncodeToString(seal.Hash[:]), formatTime(seal.SealedAt)
		ok := intact && seal.Hash == h && seal.EventID == rec.ID
		f.Chain.Sealed, f.Chain.SealedAt, f.Chain.Backfill, f.Chain.Intact = &sealed, &at, seal.Backfill, &ok
		// Chain on the sealed hash: a broken link shows once, not again in
		// every later fact.
		return seal.Hash, ok
	}
	return h, intact
}
