package stripe

import (
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// FuzzFeeOf checks the balance transaction mapping: a fee is never
// negative, its currency is normalised, its time is the transaction's, and
// the same transaction is always the same fact.
func FuzzFeeOf(f *testing.F) {
	for _, s := range []string{btFee1500, btFixture, btOtherCurrency, `"txn_1"`, `{}`, `{"id":"txn_1","fee":-1}`,
		`{"id":"txn_1","fee":9223372036854775807,"currency":"JPY","created":253402300799}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		if len(raw) == 0 {
			return // FetchFee reads an absent balance transaction as "not yet"
		}
		fee, err := feeOf(feePI, raw)
		if err != nil {
			if domain.KindOf(err) != domain.KindInvalid || domain.MessageOf(err) == "" {
				t.Fatalf("feeOf error %v is not KindInvalid with a message", err)
			}
			return
		}
		m := fee.Meta
		if fee.Amount < 0 || m.ProviderPaymentID != feePI || m.Provider != "stripe" || !strings.HasPrefix(m.ProviderEventID, "obs_") ||
			!strings.HasPrefix(fee.Source, "balance_transaction ") || m.OccurredAt.Location() != time.UTC || m.OccurredAt.Unix() <= 0 {
			t.Fatalf("fee %+v", fee)
		}
		if c, err := domain.NewCurrency(string(fee.Currency)); err != nil || c != fee.Currency {
			t.Fatalf("currency %q not normalised", fee.Currency)
		}
		again, err := feeOf(feePI, raw)
		if err != nil || *again != *fee {
			t.Fatalf("feeOf not deterministic: %+v, %v", again, err)
		}
	})
}
