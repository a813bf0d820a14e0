package api

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
)

// Role is what a bearer token may do. Both roles may read; only admin may
// use the admin routes (POST …/reconcile), checked by requireAdmin from the
// role authenticate keeps on the request context.
type Role string

// The roles of LEDGER_API_TOKENS.
const (
	RoleRead  Role = "read"
	RoleAdmin Role = "admin"
)

// valid reports whether r is a known role.
func (r Role) valid() bool { return r == RoleRead || r == RoleAdmin }

// Token is one configured API bearer token and the role it grants.
type Token struct {
	Role  Role
	Value string
}

// ParseTokens parses the "role:token,role:token" format of LEDGER_API_TOKENS.
// Spaces around entries are ignored; an empty string means no tokens. Errors
// name the entry by position and never echo a token value, because the
// message may end up in logs.
func ParseTokens(s string) ([]Token, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var tokens []Token
	for i, entry := range strings.Split(s, ",") {
		role, value, ok := strings.Cut(strings.TrimSpace(entry), ":")
		if !ok {
			return nil, fmt.Errorf("api: parse tokens: entry %d: want role:token", i+1)
		}
		tokens = append(tokens, Token{Role: Role(strings.TrimSpace(role)), Value: strings.TrimSpace(value)})
	}
	if err := validateTokens(tokens); err != nil {
		return nil, fmt.Errorf("api: parse tokens: %w", err)
	}
	return tokens, nil
}

// validateTokens reports every problem of a token list at once.
func validateTokens(tokens []Token) error {
	var errs []error
	seen := make(map[string]int, len(tokens))
	for i, t := range tokens {
		if !t.Role.valid() {
			// The value is not echoed: with the halves swapped ("token:read")
			// the "role" would be the secret.
			errs = append(errs, fmt.Errorf("entry %d: role is not read or admin", i+1))
		}
		if t.Value == "" {
			errs = append(errs, fmt.Errorf("entry %d: empty token", i+1))
			continue
		}
		if j, dup := seen[t.Value]; dup {
			errs = append(errs, fmt.Errorf("entry %d: same token as entry %d", i+1, j))
		}
		seen[t.Value] = i + 1
	}
	return errors.Join(errs...)
}

// tokenDigest is a configured token kept as its SHA-256, so comparisons run
// over fixed-length values and take the same time whatever the token length.
type tokenDigest struct {
	role Role
	sum  [sha256.Size]byte
}

func digestTokens(tokens []Token) []tokenDigest {
	out := make([]tokenDigest, len(tokens))
	for i, t := range tokens {
		out[i] = tokenDigest{role: t.Role, sum: sha256.Sum256([]byte(t.Value))}
	}
	return out
}
