package main

import (
	"context"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/projections"
)

// TEMPORARY (issue 16): projections.Queries gains the ledger reads on another
// branch. Until that merges, ledgerReader serves them as 503; once Queries
// has the methods it returns Queries itself. Delete this file on merge and
// pass the Queries as Deps.Ledger directly.
func ledgerReader(q *projections.Queries) api.LedgerReader {
	if r, ok := any(q).(api.LedgerReader); ok {
		return r
	}
	return unbuiltLedger{}
}

type unbuiltLedger struct{}

func errUnbuilt() error {
	return domain.Unavailable("ledger: read", "the ledger read model is not built yet", nil)
}

func (unbuiltLedger) Balances(context.Context, domain.BalanceQuery) ([]domain.AccountBalance, error) {
	return nil, errUnbuilt()
}

func (unbuiltLedger) Daily(context.Context, domain.DailyQuery) ([]domain.DayBalance, error) {
	return nil, errUnbuilt()
}

func (unbuiltLedger) Entries(context.Context, domain.EntryQuery) (domain.EntryPage, error) {
	return domain.EntryPage{}, errUnbuilt()
}

func (unbuiltLedger) PaymentLedger(context.Context, string, string) ([]domain.LedgerEntry, error) {
	return nil, errUnbuilt()
}
