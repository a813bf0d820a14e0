// Package truth holds the simulator's ground truth: the payments paysim
// generates, the webhooks each step sends, and the State the ledger's read
// API must show after it. Every other part of paysim speaks these types.
//
// It imports domain (statuses, currencies) and the standard library only.
package truth
