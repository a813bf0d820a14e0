package console

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"time"
)

// Token is one configured API token (api.Token's fields): the console signs
// a person in with it and calls the API with it.
type Token struct {
	Role  string // "read" or "admin"
	Name  string
	Value string
}

// session is what the cookie carries, sealed.
type session struct {
	Token   string    `json:"t"`
	Role    string    `json:"r"`
	Name    string    `json:"n"`
	Nonce   string    `json:"c"` // binds the CSRF token to this sign-in
	Expires time.Time `json:"e"`
}

const cookieName = "ledger_console"

// keys derives the cookie's sealing key and the CSRF key from the
// configured tokens, so every process with the same tokens shares them
// and a change of tokens ends every session.
type keys struct {
	aead cipher.AEAD
	csrf []byte
}

func newKeys(tokens []Token) (keys, error) {
	values := make([]string, 0, len(tokens))
	for _, t := range tokens {
		values = append(values, t.Role+":"+t.Name+":"+t.Value)
	}
	slices.Sort(values)
	root := sha256.Sum256([]byte("payledger console v1\x00" + strings.Join(values, "\x00")))
	derive := func(label string) []byte {
		m := hmac.New(sha256.New, root[:])
		m.Write([]byte(label))
		return m.Sum(nil)
	}
	block, err := aes.NewCipher(derive("cookie"))
	if err != nil {
		return keys{}, fmt.Errorf("console: session key: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return keys{}, fmt.Errorf("console: session key: %w", err)
	}
	return keys{aead: aead, csrf: derive("csrf")}, nil
}

func (k keys) seal(s session) (string, error) {
	plain, err := json.Marshal(s)
	if err != nil {
		return "", err
	}
	nonce := make([]byte, k.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(k.aead.Seal(nonce, nonce, plain, []byte(cookieName))), nil
}

var errNoSession = errors.New("console: no valid session")

func (k keys) open(value string, now time.Time) (session, error) {
	raw, err := base64.RawURLEncoding.DecodeString(value)
	if err != nil || len(raw) < k.aead.NonceSize() {
		return session{}, errNoSession
	}
	plain, err := k.aead.Open(nil, raw[:k.aead.NonceSize()], raw[k.aead.NonceSize():], []byte(cookieName))
	if err != nil {
		return session{}, errNoSession
	}
	var s session
	if err := json.Unmarshal(plain, &s); err != nil || !now.Before(s.Expires) {
		return session{}, errNoSession
	}
	return s, nil
}

// csrfToken is the form token of a session.
func (k keys) csrfToken(s session) string {
	m := hmac.New(sha256.New, k.csrf)
	m.Write([]byte(s.Nonce))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

func (k keys) checkCSRF(s session, presented string) bool {
	want := k.csrfToken(s)
	return subtle.ConstantTimeCompare([]byte(want), []byte(presented)) == 1
}

// match finds the configured token equal to presented, comparing digests
// of every token so the time tells nothing.
func match(tokens []Token, presented string) (Token, bool) {
	p := sha256.Sum256([]byte(presented))
	var found Token
	ok := false
	for _, t := range tokens {
		d := sha256.Sum256([]byte(t.Value))
		if subtle.ConstantTimeCompare(p[:], d[:]) == 1 {
			found, ok = t, true
		}
	}
	return found, ok && presented != ""
}

func newNonce() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// setCookie writes the session cookie (value "" deletes it). Secure is
// left off only on loopback, where browsers treat plain HTTP as secure
// enough and a developer's `make run` would otherwise never sign in.
func setCookie(w http.ResponseWriter, r *http.Request, value string, expires time.Time) {
	c := &http.Cookie{Name: cookieName, Value: value, Path: "/console/", HttpOnly: true, SameSite: http.SameSiteStrictMode,
		Secure: !loopback(r), Expires: expires}
	if value == "" {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// loopback reports whether the request came in on a loopback address of
// this server (the listener's, not the Host header, which a client
// chooses).
func loopback(r *http.Request) bool {
	addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	ap, err := netip.ParseAddrPort(addr.String())
	return err == nil && ap.Addr().IsLoopback()
}
