// Package rest is the small HTTP client the provider status clients share:
// GET a JSON resource from a provider's API with per-attempt timeouts,
// bounded retries with jittered exponential backoff on network errors, 408,
// 429 and 5xx, honouring Retry-After, and errors that say which provider and
// payment failed. Options are the settings every provider's StatusConfig
// embeds; provider packages add authentication and decoding.
//
// It imports the standard library and domain only. ARCHITECTURE.md
// ("Providers") says why these clients replace the providers' SDKs.
package rest
