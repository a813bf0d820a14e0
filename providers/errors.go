package providers

import "errors"

// Causes of webhook verification failures that several providers share, for
// errors.Is (metrics, tests). Each provider wraps them in a domain error whose
// message gives the details, and re-exports those it uses under its own name.
var (
	// ErrNotSigned: the signature header is missing or empty.
	ErrNotSigned = errors.New("not signed")
	// ErrInvalidHeader: a signature header is not in its scheme's format.
	ErrInvalidHeader = errors.New("invalid signature header")
	// ErrNoValidSignature: no signature matches any configured secret or key.
	ErrNoValidSignature = errors.New("no valid signature")
	// ErrTooOld: the signature is authentic but older than the provider accepts.
	ErrTooOld = errors.New("signature too old")
)
