// Package gen generates paysim's ground truth: payments spread over the
// providers, each following a realistic lifecycle (success, failure then
// success, cancel, partial and full refunds, disputes won and lost, Pix/boleto
// paid late, chargebacks), with every step's webhook body, the provider API's
// answer after it and the state the read API must show, written by hand from
// the mapping rules in ARCHITECTURE.md.
//
// Generation is deterministic from the seed: payment i is the same whatever
// the number of payments, and IDs of runs with different seeds do not collide.
// One file per provider builds its payloads as that provider does.
//
// It imports truth and domain only; never a provider package (a test checks
// the truths against them) nor anything of the ledger's.
package gen
