// Package archtest holds payledger's one architecture test: a table, for
// every package of the module, of what its production code may depend on
// (our packages, transitively, and third-party modules, directly), checked
// against `go list`. ARCHITECTURE.md's "must not import" column is the same
// rule in words. The package has no code of its own: the table and its
// checker live in the test.
package archtest
