package providertest

import (
	"net/http"
	"net/url"
	"time"

	"github.com/payledger/payledger/domain"
)

// Delivery is one webhook request as a provider sees it.
type Delivery struct {
	Name   string
	Header http.Header
	Query  url.Values
	Body   []byte
	// Now is the verifier's clock for this delivery.
	Now time.Time
}

// Accepted is an authentic delivery of a tracked type: it must verify and
// parse to at least one event.
type Accepted struct {
	Delivery
	// Want, when not nil, is exactly what Parse must return as events.
	Want []domain.Event
}

// Class says what is wrong with a rejected delivery.
type Class string

// The classes Run requires vectors of, unless Vectors.Exempt says why not.
const (
	Forged    Class = "forged"    // altered after signing, or signed with another secret
	Stale     Class = "stale"     // authentic, but older than the provider accepts
	Truncated Class = "truncated" // a signature, token or signed part cut short
	Recased   Class = "recased"   // a signed part, token or key in another case
	Unsigned  Class = "unsigned"  // no signature or token at all
	Malformed Class = "malformed" // a signature header not in its scheme's format (optional)
)

// requiredClasses are those every provider has vectors of, or an exemption for.
func requiredClasses() []Class { return []Class{Forged, Stale, Truncated, Recased, Unsigned} }

// Rejected is a delivery Verify must refuse with Kind, wrapping Err.
type Rejected struct {
	Delivery
	Class Class
	Kind  domain.Kind
	Err   error
}

// Vectors are one provider's deliveries for Run.
type Vectors struct {
	// Accepted are authentic deliveries of tracked types, the spec's own
	// vectors among them.
	Accepted []Accepted
	// Ignored are authentic deliveries of types the provider does not track.
	Ignored []Delivery
	// Rejected are deliveries Verify must refuse, with their class.
	Rejected []Rejected
	// Exempt names required classes that cannot occur, and why (a scheme
	// that signs no timestamp has no stale deliveries).
	Exempt map[Class]string

	// SignedHeaders and SignedQuery name the parts of an Accepted delivery
	// that authenticate it; BodySigned says the signature covers the body.
	// Run derives more rejections from them: each such header or query
	// value cut short by one byte, and, with BodySigned, the body cut short
	// or with any one bit flipped. Each must fail with RejectKind.
	SignedHeaders []string
	SignedQuery   []string
	BodySigned    bool
	RejectKind    domain.Kind

	// Authenticity is what Authenticate gives every Accepted and Ignored
	// delivery with the proof VerifyProof returned; "" means AuthVerified.
	Authenticity domain.AuthResult

	// Secrets are the configured secrets: no error may quote one.
	Secrets []string
}
