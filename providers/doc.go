// Package providers is the home of payledger's payment-provider adapters: one
// sub-package per provider (providers/stripe, …), each owning everything that
// is specific to that provider.
//
// Layout and rules:
//
//   - A provider package exports a *Provider that satisfies the small Provider
//     interface the api package declares where it uses it (Name, Verify, Parse).
//     api never imports a provider's types beyond its constructor, which
//     cmd/ledger calls with configuration parsed from LEDGER_* variables.
//   - Verify authenticates a delivery on the raw request bytes, before any
//     parsing, with an injected clock; every failure is a domain.KindInvalid
//     error whose message says what was wrong and never includes a secret.
//   - Parse turns a verified body into a domain.Notification: the provider's
//     event identity plus zero or more domain events. A well-formed event of a
//     type payledger does not track yields no events and an IgnoredReason.
//   - Header names, signature schemes, payload shapes, the provider's type
//     strings and their mapping to domain events stay inside the provider's
//     package. api, domain, eventstore and projections only ever see domain
//     types.
//   - Provider packages import the standard library and domain only. An
//     official SDK may be used in tests (as an oracle for differential tests),
//     never in production code, so SDK upgrades cannot change what we accept.
//     They must not import api, eventstore or projections.
//
// This package itself contains no code.
package providers
