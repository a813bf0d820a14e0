// Package truth holds the simulator's ground truth: the payments paysim
// generates, the webhooks each step sends, and the State the ledger's read
// API must show after it, the fee each provider states, and the books all
// of it implies (Ledger: issue 16's chart, applied by paysim's own rules to
// its own scenarios, never by the ledger's derivation). Every other part of
// paysim speaks these types.
//
// It imports domain (statuses, currencies) and the standard library only.
package truth
