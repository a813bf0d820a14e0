package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"

	"github.com/payledger/payledger/domain"
)

// authenticate guards /v1: it requires "Authorization: Bearer <token>"
// matching a configured token, and records the token's role for the
// handlers (and the access log). Every role may read; admin routes are
// wrapped in requireAdmin as well.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t, ok := matchToken(s.tokens, r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", "Bearer")
			s.writeError(w, r, domain.Unauthorized("api: authenticate", "missing or invalid bearer token", nil))
			return
		}
		in := infoFrom(r.Context())
		in.role, in.token = t.role, t.name
		next.ServeHTTP(w, r)
	})
}

// requireAdmin guards a route that changes something, inside authenticate:
// a valid token without the admin role is 403, not 401 (the caller is known,
// and another try with the same token cannot succeed).
func (s *Server) requireAdmin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if role, ok := roleFrom(r.Context()); !ok || role != RoleAdmin {
			s.writeForbidden(w, r, role, "this route needs a token with the admin role")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// writeForbidden answers 403 with code "forbidden". It is not a domain.Kind:
// roles are the API's own business, and the Kind list is append-only for
// every adapter, so the API writes this status itself, like 405.
func (s *Server) writeForbidden(w http.ResponseWriter, r *http.Request, role Role, msg string) {
	s.log.LogAttrs(r.Context(), slog.LevelInfo, "api: request rejected",
		slog.String("request_id", requestIDFrom(r.Context())), slog.String("kind", codeForbidden),
		slog.String("role", string(role)), slog.String("token", infoFrom(r.Context()).token), slog.String("error", msg))
	s.writeErrorBody(w, r, http.StatusForbidden, codeForbidden, msg)
}

// codeForbidden is error.code of a 403.
const codeForbidden = "forbidden"

// matchToken finds the configured token of an Authorization header.
// It compares SHA-256 digests (fixed length, so the time does not depend on
// how much of a token matched or on its length) against every configured
// token without stopping at a match, so the time does not tell which one
// matched either.
func matchToken(tokens []tokenDigest, header string) (tokenDigest, bool) {
	scheme, presented, ok := strings.Cut(header, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return tokenDigest{}, false
	}
	presented = strings.TrimSpace(presented)
	if presented == "" {
		return tokenDigest{}, false
	}
	sum := sha256.Sum256([]byte(presented))
	found, idx := 0, 0
	for i := range tokens {
		eq := subtle.ConstantTimeCompare(sum[:], tokens[i].sum[:])
		idx = subtle.ConstantTimeSelect(eq, i, idx)
		found |= eq
	}
	if found == 0 {
		return tokenDigest{}, false
	}
	return tokens[idx], true
}
