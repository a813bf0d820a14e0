package domain

import (
	"errors"
	"strings"
)

// Kind classifies an error so that adapters can map it to a transport status
// without knowing where it came from. Values are append-only: never reorder.
type Kind uint8

// The kinds. KindInternal is the zero value so an unclassified error is never
// mistaken for a client error.
const (
	KindInternal     Kind = iota // a bug or an unexpected failure: 500
	KindInvalid                  // the caller sent something we cannot accept: 400
	KindNotFound                 // the thing asked for does not exist: 404
	KindConflict                 // optimistic concurrency lost; retry: 409
	KindUnauthorized             // missing or wrong credentials: 401
	KindUnavailable              // a dependency is down; retry later: 503
	KindTooLarge                 // the request body is over the limit: 413
)

var kindNames = [...]string{"internal", "invalid", "not_found", "conflict", "unauthorized", "unavailable", "too_large"}

// String returns the kind's stable lower-case name, used in API error bodies.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "internal"
}

// Error is a classified error. Op names the operation ("stripe: verify"), Msg
// is safe to show a client, Err is the cause (never shown to clients).
type Error struct {
	Kind Kind
	Op   string
	Msg  string
	Err  error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	if e.Op != "" {
		b.WriteString(e.Op)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	if e.Err != nil {
		if e.Msg != "" {
			b.WriteString(": ")
		}
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause so errors.Is/As see through an Error.
func (e *Error) Unwrap() error { return e.Err }

// Errorf-free constructors keep call sites short and the kind explicit.

// Invalid returns a KindInvalid error.
func Invalid(op, msg string, cause error) error {
	return &Error{Kind: KindInvalid, Op: op, Msg: msg, Err: cause}
}

// Unauthorized returns a KindUnauthorized error.
func Unauthorized(op, msg string, cause error) error {
	return &Error{Kind: KindUnauthorized, Op: op, Msg: msg, Err: cause}
}

// Unavailable returns a KindUnavailable error.
func Unavailable(op, msg string, cause error) error {
	return &Error{Kind: KindUnavailable, Op: op, Msg: msg, Err: cause}
}

// Sentinels for expected outcomes. Wrap them with fmt.Errorf("...: %w", ...)
// and test with errors.Is.
var (
	// ErrUnknownPayment: no payment with that provider and ID.
	ErrUnknownPayment = &Error{Kind: KindNotFound, Msg: "unknown payment"}
	// ErrConflict: the stream moved since it was read (wrong expected revision).
	ErrConflict = &Error{Kind: KindConflict, Msg: "concurrent modification"}
	// ErrUnavailable: a backing service could not be reached.
	ErrUnavailable = &Error{Kind: KindUnavailable, Msg: "service unavailable"}
)

// KindOf returns the kind of the first *Error in err's chain, or KindInternal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return KindInternal
}

// MessageOf returns the client-safe message of the first *Error in err's
// chain, or "" when there is none (the caller then uses a generic text).
func MessageOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return ""
}
