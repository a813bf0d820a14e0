// Package providers holds what payledger's payment-provider adapters share:
// the causes of verification failures (ErrNotSigned, ErrInvalidHeader,
// ErrNoValidSignature, ErrTooOld), IDProblem for identifiers taken from
// payloads, ObservationID for facts observed through a status API, and
// AuthenticateHMAC, the rule by which an HMAC scheme re-verifies a stored
// delivery with the secret fingerprint kept at receipt.
//
// Each provider is one sub-package (stripe, mercadopago, asaas, pagarme)
// owning everything specific to it: header names, signature scheme, payload
// shapes, type strings and their mapping to domain events. providers/rest is
// the HTTP client their status clients share, and providers/providertest the
// contract suite each of them runs.
//
// This package and the adapters import the standard library, domain,
// providers and providers/rest only: never api, eventstore, projections or
// jobs, and no provider SDK outside tests. ARCHITECTURE.md ("Providers")
// describes the contract and each provider's protocol.
package providers
