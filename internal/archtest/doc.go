// Package archtest holds payledger's architecture tests: a table, for every
// package of the module, of what its production code may depend on (our
// packages, transitively, and third-party modules, directly), checked against
// `go list`; and the size and ownership rules of issue 15 (no production
// function over 60 lines, no SQL in cmd/ledger). ARCHITECTURE.md's "must not
// import" column is the same rule in words. The package has no code of its
// own: the tables and their checkers live in the tests.
package archtest
