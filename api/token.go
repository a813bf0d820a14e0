package api

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"regexp"
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

// Token is one configured API bearer token, the role it grants and the name
// of who holds it (access logs, and the facts a person's action appends).
type Token struct {
	Role  Role
	Name  string
	Value string
}

// validName is what a token's name may be: short, lower-case, safe in logs
// and facts.
var validName = regexp.MustCompile(`^[a-z0-9_.-]{1,64}$`)

// ParseTokens parses LEDGER_API_TOKENS: comma-separated "role:name:token"
// entries, or the older "role:token" (named after its role). Tokens contain
// no ':'. Spaces around entries and fields are ignored; an empty string
// means no tokens. Errors name the entry by position and never echo a token
// value, because the message may end up in logs.
func ParseTokens(s string) ([]Token, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var tokens []Token
	var errs []error
	for i, entry := range strings.Split(s, ",") {
		fields := strings.Split(strings.TrimSpace(entry), ":")
		for j := range fields {
			fields[j] = strings.TrimSpace(fields[j])
		}
		switch len(fields) {
		case 2:
			tokens = append(tokens, Token{Role: Role(fields[0]), Name: fields[0], Value: fields[1]})
		case 3:
			if !validName.MatchString(fields[1]) {
				// Not echoed either: a misplaced field may be the secret.
				errs = append(errs, fmt.Errorf("entry %d: the name must be 1 to 64 of a-z 0-9 _ . -", i+1))
			}
			tokens = append(tokens, Token{Role: Role(fields[0]), Name: fields[1], Value: fields[2]})
		default:
			errs = append(errs, fmt.Errorf("entry %d: want role:name:token or role:token (a token contains no ':')", i+1))
		}
	}
	if err := errors.Join(append(errs, validateTokens(tokens))...); err != nil {
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
	name string
	sum  [sha256.Size]byte
}

func digestTokens(tokens []Token) []tokenDigest {
	out := make([]tokenDigest, len(tokens))
	for i, t := range tokens {
		name := t.Name
		if name == "" {
			name = string(t.Role) // a Token built in code, without a name
		}
		out[i] = tokenDigest{role: t.Role, name: name, sum: sha256.Sum256([]byte(t.Value))}
	}
	return out
}
