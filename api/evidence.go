package api

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"time"

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

// Evidence is GET /v1/payments/{provider}/{id}/evidence and the manifest of
// its zip: every stored fact of the payment with its delivery as received,
// its re-verification computed now, and its place in the stream's hash
// chain.
type Evidence struct {
	Provider          string         `json:"provider"`
	ProviderPaymentID string         `json:"provider_payment_id"`
	Stream            string         `json:"stream"`
	GeneratedAt       string         `json:"generated_at"`
	ChainSeed         string         `json:"chain_seed"`
	Facts             []EvidenceFact `json:"facts"`
}

// EvidenceFact is one stored fact's evidence.
type EvidenceFact struct {
	Revision        uint64              `json:"revision"`
	EventID         string              `json:"event_id"`
	Type            string              `json:"type"`
	ProviderEventID string              `json:"provider_event_id"`
	OccurredAt      string              `json:"occurred_at"`
	RecordedAt      string              `json:"recorded_at"`
	Source          string              `json:"source"`
	Delivery        EvidenceDelivery    `json:"delivery"`
	Verification    domain.Authenticity `json:"verification"`
	// Receipt is how ingest verified the delivery when it arrived (the
	// scheme, the secret's fingerprint, the asymmetric key itself); null for
	// facts that were not verified by a signature or predate proofs.
	Receipt *domain.AuthProof `json:"receipt"`
	Chain   EvidenceChain     `json:"chain"`
}

// EvidenceDelivery is the delivery as received. For a fact fetched from the
// provider's API, Body is the API's answer.
type EvidenceDelivery struct {
	Body string `json:"body"` // base64 of the exact bytes
	// BodyFile names the body's file inside the evidence zip; empty in the
	// JSON answer.
	BodyFile   string            `json:"body_file,omitempty"`
	Headers    map[string]string `json:"headers"`
	Query      string            `json:"query"`
	ReceivedAt string            `json:"received_at"`
	RequestID  string            `json:"request_id"`
}

// EvidenceChain is the fact's link: Hash is ChainHash(Previous, the event
// as stored now); Sealed the hash the sealer recorded; Intact whether they
// agree and the previous link did.
type EvidenceChain struct {
	Previous string  `json:"previous"`
	Hash     string  `json:"hash"`
	Sealed   *string `json:"sealed"` // null: not sealed yet
	SealedAt *string `json:"sealed_at"`
	Backfill bool    `json:"backfill"`
	Intact   *bool   `json:"intact"` // null while not sealed
}

// EvidenceSource is what evidence is built from: the route's server and
// `ledger evidence` each fill one.
type EvidenceSource struct {
	Store StreamReader
	Seals SealReader
	// Providers are the configured adapters; a fact of any other provider
	// reads unverifiable. Each must be an Authenticator to check anything.
	Providers []Provider
	Now       func() time.Time
}

// StreamReader reads one stream in revision order (EventStore's ReadStream).
type StreamReader interface {
	ReadStream(ctx context.Context, stream string) ([]eventstore.RecordedEvent, error)
}

// BuildEvidence gathers the evidence of one payment. An unknown payment is
// domain.ErrUnknownPayment.
func BuildEvidence(ctx context.Context, src EvidenceSource, provider, id string) (Evidence, error) {
	byName := make(map[string]Provider, len(src.Providers))
	for _, p := range src.Providers {
		byName[p.Name()] = p
	}
	return buildEvidence(ctx, src, byName, eventstore.NewCodec(), provider, id)
}

func buildEvidence(ctx context.Context, src EvidenceSource, providers map[string]Provider, codec *eventstore.Codec, provider, id string) (Evidence, error) {
	recs, evs, err := readFacts(ctx, src.Store, codec, provider, id, asOf{})
	if err != nil {
		return Evidence{}, err
	}
	stream := eventstore.PaymentStream(provider, id)
	seals, err := src.Seals.StreamSeals(ctx, stream)
	if err != nil {
		return Evidence{}, fmt.Errorf("api: evidence %s: %w", stream, err)
	}
	out := Evidence{Provider: provider, ProviderPaymentID: id, Stream: stream, GeneratedAt: formatTime(src.Now()),
		ChainSeed: hex.EncodeToString(eventstore.ChainSeed[:]), Facts: make([]EvidenceFact, 0, len(recs))}
	prev, intact := eventstore.ChainSeed, true
	for i, rec := range recs {
		f, err := evidenceFact(providers[provider], rec, evs[i])
		if err != nil {
			return Evidence{}, err
		}
		prev, intact = chainLink(&f, rec, prev, intact, seals)
		out.Facts = append(out.Facts, f)
	}
	return out, nil
}

// getEvidence serves GET /v1/payments/{provider}/{provider_payment_id}/evidence:
// JSON, or with format=zip the evidence zip.
func (s *Server) getEvidence(w http.ResponseWriter, r *http.Request) {
	v := mux.Vars(r)
	q := r.URL.Query()
	if err := checkParams("api: evidence", q, []string{"format"}); err != nil {
		s.writeError(w, r, err)
		return
	}
	format := q.Get("format")
	if format != "" && format != "json" && format != "zip" {
		s.writeError(w, r, domain.Invalid("api: evidence", fmt.Sprintf("format %q is not json or zip", format), nil))
		return
	}
	src := EvidenceSource{Store: s.store, Seals: s.seals, Now: s.cfg.Now}
	ev, err := buildEvidence(r.Context(), src, s.providers, s.codec, v["provider"], v["provider_payment_id"])
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if format != "zip" {
		s.writeJSON(w, r, http.StatusOK, ev)
		return
	}
	// Built whole before the first byte is sent, so a failure is a clean
	// 500 rather than a truncated download.
	var buf bytes.Buffer
	if err := WriteEvidenceZip(&buf, ev); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+EvidenceZipName(ev)+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

func evidenceFact(p Provider, rec eventstore.RecordedEvent, e domain.Event) (EvidenceFact, error) {
	md, err := eventstore.DecodeMetadata(rec.Metadata)
	if err != nil {
		return EvidenceFact{}, fmt.Errorf("api: evidence %s at %d: %w", rec.Stream, rec.Revision, err)
	}
	m := e.EventMeta()
	headers := md.AuthHeaders
	if headers == nil {
		headers = map[string]string{}
	}
	var receipt *domain.AuthProof
	if md.Proof != nil && !md.Proof.IsZero() {
		receipt = md.Proof
	}
	return EvidenceFact{Revision: rec.Revision, EventID: rec.ID.String(), Type: rec.Type, ProviderEventID: m.ProviderEventID,
		OccurredAt: formatTime(m.OccurredAt), RecordedAt: formatTime(rec.RecordedAt), Source: md.Source,
		Delivery: EvidenceDelivery{Body: base64.StdEncoding.EncodeToString(md.RawBody), Headers: headers, Query: md.Query,
			ReceivedAt: formatTime(md.ReceivedAt), RequestID: md.RequestID},
		Verification: reverify(rec.Stream, p, e, md), Receipt: receipt}, nil
}

// reverify re-computes a fact's authenticity now with p, the provider's
// configured adapter (nil: not configured). Only a delivery that came
// signed can be checked; the others say why not.
func reverify(stream string, p Provider, e domain.Event, md eventstore.Metadata) domain.Authenticity {
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
	a, ok := p.(Authenticator)
	if !ok {
		return unverifiable("the provider of " + stream + " is not configured in this process, so none of its secrets can check it")
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
func chainLink(f *EvidenceFact, rec eventstore.RecordedEvent, prev [32]byte, intact bool, seals []eventstore.Seal) ([32]byte, bool) {
	h := eventstore.ChainHash(prev, rec)
	f.Chain = EvidenceChain{Previous: hex.EncodeToString(prev[:]), Hash: hex.EncodeToString(h[:])}
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
