package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/gorilla/mux"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// webhookResponse is the 200 body of a delivery. Providers only look at the
// status; the body is for people reading the provider's delivery log.
type webhookResponse struct {
	Outcome         string   `json:"outcome"`
	ProviderEventID string   `json:"provider_event_id,omitempty"`
	EventID         string   `json:"event_id,omitempty"`
	Stream          string   `json:"stream,omitempty"`
	Streams         []string `json:"streams,omitempty"` // only when the delivery touched several payments
	Reason          string   `json:"reason,omitempty"`  // why an ignored delivery is not tracked
	// A conflict: the stream holding the event ID, and the dead letter.
	ConflictingStream string `json:"conflicting_stream,omitempty"`
	DeadLetterID      int64  `json:"dead_letter_id,omitempty"`
}

// handleWebhook serves POST /webhooks/{provider}.
func (s *Server) handleWebhook(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	name := mux.Vars(r)["provider"]
	resp, err := s.webhook(w, r, name)
	label := name
	if _, ok := s.providers[name]; !ok {
		label = unknownProvider
	}
	if err != nil {
		outcome := outcomeRejected
		if statusOf(domain.KindOf(err)) >= 500 {
			outcome = outcomeError
		}
		s.metrics.delivery(label, outcome, time.Since(start))
		s.writeError(w, r, err)
		return
	}
	s.metrics.delivery(label, resp.Outcome, time.Since(start))
	s.writeJSON(w, r, http.StatusOK, resp)
}

// webhook runs the delivery steps in their security order: bound the body,
// find the provider, verify the raw bytes, and only then parse and store.
// Nothing is stored unless the signature verified.
func (s *Server) webhook(w http.ResponseWriter, r *http.Request, name string) (webhookResponse, error) {
	body, err := s.readBody(w, r)
	if err != nil {
		return webhookResponse{}, err
	}
	p, ok := s.providers[name]
	if !ok {
		return webhookResponse{}, notFound("api: webhook", "no webhook for this provider")
	}
	if sc, ok := p.(SourceChecker); ok && !sc.AllowSource(remoteIP(r)) {
		return webhookResponse{}, domain.Unauthorized("api: webhook "+name, "source address not allowed", nil)
	}
	now := s.cfg.Now()
	query := r.URL.Query()
	proof, err := verify(r.Context(), p, r.Header, query, body, now)
	if err != nil {
		return webhookResponse{}, clientError("api: verify "+name, "webhook signature verification failed", err)
	}
	n, err := p.Parse(r.Context(), r.Header, query, body)
	if err != nil {
		return webhookResponse{}, clientError("api: parse "+name, "malformed webhook payload", err)
	}
	if len(n.Events) == 0 {
		return webhookResponse{Outcome: outcomeIgnored, ProviderEventID: n.ProviderEventID, Reason: n.IgnoredReason}, nil
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.cfg.WebhookTimeout)
	defer cancel()
	meta := eventstore.Metadata{
		Provider:          name,
		ProviderEventType: n.ProviderEventType,
		ReceivedAt:        now.UTC(),
		RawBody:           body,
		SignatureHeader:   n.SignatureHeader,
		RequestID:         requestIDFrom(r.Context()),
		AuthHeaders:       keptHeaders(p, r.Header),
		Query:             r.URL.RawQuery,
		Proof:             proof,
	}
	res, err := s.record(ctx, n, meta)
	if errors.Is(err, eventstore.ErrStoredElsewhere) && len(res.Collisions) > 0 {
		return s.parkCollisions(ctx, r, n, meta, res)
	}
	if err != nil {
		return webhookResponse{}, err
	}
	resp := webhookResponse{
		Outcome:         outcomeAccepted,
		ProviderEventID: n.ProviderEventID,
		EventID:         res.FirstEventID.String(),
		Stream:          res.Streams[0],
	}
	if res.Duplicate() {
		resp.Outcome = outcomeDuplicate
	}
	if len(res.Streams) > 1 {
		resp.Streams = res.Streams
	}
	return resp, nil
}

// verify authenticates a delivery and returns how (nil when the provider
// does not say, or the proof records nothing).
func verify(ctx context.Context, p Provider, header http.Header, query url.Values, body []byte, now time.Time) (*domain.AuthProof, error) {
	pv, ok := p.(ProofVerifier)
	if !ok {
		return nil, p.Verify(ctx, header, query, body, now)
	}
	proof, err := pv.VerifyProof(ctx, header, query, body, now)
	if err != nil || proof.IsZero() {
		return nil, err
	}
	return &proof, nil
}

// keptHeaders are the authenticating headers of the delivery its provider
// allows to keep, as received.
func keptHeaders(p Provider, header http.Header) map[string]string {
	hk, ok := p.(HeaderKeeper)
	if !ok {
		return nil
	}
	var out map[string]string
	for _, name := range hk.KeptHeaders() {
		if v := header.Get(name); v != "" {
			if out == nil {
				out = make(map[string]string, 2)
			}
			out[http.CanonicalHeaderKey(name)] = v
		}
	}
	return out
}

// remoteIP is the connection's peer address (the zero Addr when unparsable,
// which no allow-list admits).
func remoteIP(r *http.Request) netip.Addr {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// readBody reads at most MaxBodyBytes. A larger body is KindTooLarge (413);
// MaxBytesReader also tells net/http to close the connection after the
// response, so the rest of the body is never read.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
	if err == nil {
		return body, nil
	}
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, &domain.Error{Kind: domain.KindTooLarge, Op: "api: read body",
			Msg: fmt.Sprintf("request body larger than %d bytes", tooLarge.Limit), Err: err}
	}
	return nil, domain.Invalid("api: read body", "could not read request body", err)
}
