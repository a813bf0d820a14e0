// Package providertest is the contract suite of webhook provider adapters:
// every package under providers/ runs Run with its own vectors, so what api
// relies on is checked once, the same way, for every provider.
//
// Run checks that the spec vectors verify and parse; that forged, stale,
// truncated, re-cased and unsigned deliveries fail Verify with the expected
// kind and cause, and without quoting a secret; that ignored types yield no
// events but a reason; that Parse is stable across calls; and that every
// event names its provider, payment and provider event.
//
// It also declares the interfaces api and jobs declare for providers, so a
// provider's tests assert them without each keeping a copy.
//
// It imports domain and the standard library only: never api or a provider.
// ARCHITECTURE.md ("Providers") says what the contract is for.
package providertest
