// Package console is payledger's browser console, served by `ledger serve`
// under /console/: server-rendered pages (html/template, assets embedded)
// for finance, operations and auditors.
//
// The console holds no data of its own and no second copy of the rules: each
// page is built from the read API's JSON, fetched in process through the API
// handler with the signed-in person's own token, so what the console shows
// (and what its CSV links download) is exactly what the API answers, under
// the same roles. A sign-in exchanges a token for a session cookie that
// carries the token sealed (AES-GCM) with a key derived from the configured
// tokens: any process with the same LEDGER_API_TOKENS reads it, and changing
// the tokens signs everyone out. State-changing forms carry a CSRF token
// bound to the session.
package console
