package api

import (
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/payledger/payledger/domain"
)

// statusOf is the one Kind → HTTP status table (ARCHITECTURE.md repeats it).
// A kind it does not know is a 500: never guess a client error.
func statusOf(k domain.Kind) int {
	switch k {
	case domain.KindInvalid:
		return http.StatusBadRequest
	case domain.KindUnauthorized:
		return http.StatusUnauthorized
	case domain.KindNotFound:
		return http.StatusNotFound
	case domain.KindConflict:
		return http.StatusConflict
	case domain.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case domain.KindUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// Generic texts for server-side failures: their causes stay in our logs.
const (
	msgInternal    = "internal error"
	msgUnavailable = "service unavailable; retry later"
)

type errorBody struct {
	Error     errorDetail `json:"error"`
	RequestID string      `json:"request_id"`
}

type errorDetail struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// writeError is the only way handlers report an error. It classifies err by
// its domain.Kind (errors.As, through any wrapping), shows clients only the
// client-safe message of client errors, and logs the cause of every 5xx with
// the request ID so an operator can find it from the client's body.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	kind := domain.KindOf(err)
	status := statusOf(kind)
	id := requestIDFrom(r.Context())
	if status >= 500 {
		msg := msgInternal
		if status == http.StatusServiceUnavailable {
			msg = msgUnavailable
		}
		s.log.LogAttrs(r.Context(), slog.LevelError, "api: request failed",
			slog.String("request_id", id), slog.String("kind", kind.String()),
			slog.String("method", r.Method), slog.String("path", r.URL.Path),
			slog.String("error", err.Error()))
		s.writeErrorBody(w, r, status, kind.String(), msg)
		return
	}
	msg := domain.MessageOf(err)
	if msg == "" {
		msg = http.StatusText(status)
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "api: request rejected",
		slog.String("request_id", id), slog.String("kind", kind.String()), slog.String("error", err.Error()))
	s.writeErrorBody(w, r, status, kind.String(), msg)
}

// writeErrorBody writes the error envelope. Only writeError, the 405
// handler (405 is a routing outcome, not a domain kind) and writeForbidden
// (403, a role outcome) call it.
func (s *Server) writeErrorBody(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	body := errorBody{Error: errorDetail{Code: code, Message: msg}, RequestID: requestIDFrom(r.Context())}
	b, err := json.Marshal(body)
	if err != nil { // strings only: cannot happen, but never answer without a body
		b = []byte(`{"error":{"code":"internal","message":"internal error"}}`)
	}
	writeBody(w, status, b)
}

// writeJSON writes v as the response. The value is marshalled before the
// status goes out so an encoding failure can still become a 500.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeBody(w, status, b)
}

func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	// A failed write means the client went away; there is nobody to tell.
	_, _ = w.Write(append(b, '\n'))
}

// notFound returns a KindNotFound error with a client-safe message.
func notFound(op, msg string) error {
	return &domain.Error{Kind: domain.KindNotFound, Op: op, Msg: msg}
}

// clientError keeps err when it is already a client error and otherwise
// makes it a KindInvalid one with msg. Provider adapters report bad
// deliveries as KindInvalid or KindUnauthorized; anything else they return
// still means "this delivery was not accepted", and 5xx is reserved for
// failing to store what we accepted. One exception: KindUnavailable means
// the delivery could not be checked *now* (Pagar.me's key server is down
// and the key is new to us); it may be genuine, so it stays a 503 and the
// provider retries instead of dropping it after a 400.
func clientError(op, msg string, err error) error {
	switch domain.KindOf(err) {
	case domain.KindInvalid, domain.KindUnauthorized, domain.KindTooLarge, domain.KindUnavailable:
		return err
	}
	return domain.Invalid(op, msg, err)
}
