package api

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/google/uuid"
)

// reqInfo is what the middleware learns about a request: its ID, and the
// role and token name once authenticated. It is a pointer on the context so
// the access log, which runs outside the auth middleware, can report them too.
type reqInfo struct {
	id    string
	role  Role
	token string // the token's name (LEDGER_API_TOKENS), who is asking
}

type reqInfoKey struct{}

func infoFrom(ctx context.Context) *reqInfo {
	if in, ok := ctx.Value(reqInfoKey{}).(*reqInfo); ok {
		return in
	}
	return &reqInfo{}
}

// requestIDFrom returns the request's ID ("" outside the middleware).
func requestIDFrom(ctx context.Context) string { return infoFrom(ctx).id }

// roleFrom returns the authenticated role; false on unauthenticated routes.
func roleFrom(ctx context.Context) (Role, bool) {
	r := infoFrom(ctx).role
	return r, r != ""
}

// maxRequestIDLen bounds a caller's X-Request-Id; longer ones are replaced.
const maxRequestIDLen = 128

// saneRequestID accepts IDs that are safe to log and echo: short, and made
// only of characters that cannot forge log lines or headers.
func saneRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == ':'
		if !ok {
			return false
		}
	}
	return true
}

// withRequestID takes the caller's X-Request-Id when sane, else makes one,
// echoes it in the response and puts it on the context.
func (s *Server) withRequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Request-Id")
		if !saneRequestID(id) {
			id = uuid.NewString()
		}
		w.Header().Set("X-Request-Id", id)
		ctx := context.WithValue(r.Context(), reqInfoKey{}, &reqInfo{id: id})
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// observe writes one access-log line per request and turns a panic into a
// 500. The two share the response recorder: recovery needs to know whether
// the status already went out, and the log needs the final status.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler { // net/http's own abort signal
					panic(v)
				}
				s.log.LogAttrs(r.Context(), slog.LevelError, "api: panic",
					slog.String("request_id", requestIDFrom(r.Context())),
					slog.String("panic", fmt.Sprint(v)), slog.String("stack", string(debug.Stack())))
				if rec.status == 0 {
					s.writeError(rec, r, fmt.Errorf("api: panic: %v", v))
				}
			}
			s.accessLog(r, rec, time.Since(start))
		}()
		next.ServeHTTP(rec, r)
	})
}

func (s *Server) accessLog(r *http.Request, rec *statusRecorder, d time.Duration) {
	status := rec.status
	if status == 0 {
		status = http.StatusOK
	}
	attrs := []slog.Attr{
		slog.String("request_id", requestIDFrom(r.Context())),
		slog.String("method", r.Method),
		slog.String("path", r.URL.Path),
		slog.Int("status", status),
		slog.Int64("bytes", rec.bytes),
		slog.Duration("duration", d),
		slog.String("remote", r.RemoteAddr),
	}
	if role, ok := roleFrom(r.Context()); ok {
		attrs = append(attrs, slog.String("role", string(role)), slog.String("token", infoFrom(r.Context()).token))
	}
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "http request", attrs...)
}

// statusRecorder remembers the status and size of a response.
type statusRecorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 && code >= 200 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
