package domain_test

import (
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/payledger/payledger/domain"
)

func fee(id string, sec int, amount int64, c domain.Currency) domain.Event {
	return &domain.FeeAssessed{Meta: meta(id, sec), Amount: amount, Currency: c, Source: "test"}
}

func inquiry(id string, sec int) domain.Event {
	return &domain.InquiryOpened{Meta: meta(id, sec), DisputeID: "dp_1", Amount: 2000, Currency: "USD"}
}

// bal is a compact Balance for table tests.
func bal(a domain.Account, c domain.Currency, v int64) domain.Balance {
	return domain.Balance{Account: a, Currency: c, Amount: v}
}

const (
	pb  = domain.AccountProviderBalance
	ac  = domain.AccountSales
	rf  = domain.AccountRefunds
	dsp = domain.AccountDisputes
	cb  = domain.AccountChargebacks
	fe  = domain.AccountFees
)

// TestBooks: each money reality of the issue maps to the right balances.
func TestBooks(t *testing.T) {
	tests := []struct {
		name  string
		given []domain.Event
		want  []domain.Balance
	}{
		{name: "nothing for a pending payment", given: []domain.Event{created("c", 0, 2000)}},
		{name: "an authorization posts nothing", given: []domain.Event{authorized("a", 0)}},
		{name: "a failed payment posts nothing, fee included", given: []domain.Event{failed("f", 0), fee("x", 1, 60, "USD")}},
		{name: "a cancelled payment posts nothing", given: []domain.Event{authorized("a", 0), cancelled("c", 1), fee("x", 2, 60, "USD")}},
		{name: "a capture", given: []domain.Event{succeeded("s", 0, 2000)},
			want: []domain.Balance{bal(pb, "USD", 2000), bal(ac, "USD", 2000)}},
		{name: "a partial refund reduces the provider balance", given: []domain.Event{succeeded("s", 0, 2000), refunded("r", 1, 500)},
			want: []domain.Balance{bal(pb, "USD", 1500), bal(ac, "USD", 2000), bal(rf, "USD", 500)}},
		{name: "an open dispute withholds its amount", given: []domain.Event{succeeded("s", 0, 2000), disputeOpened("d", 1)},
			want: []domain.Balance{bal(ac, "USD", 2000), bal(dsp, "USD", 2000)}},
		{name: "a won dispute returns it", given: []domain.Event{succeeded("s", 0, 2000), disputeOpened("d", 1), disputeClosed("w", 2, domain.DisputeWon)},
			want: []domain.Balance{bal(pb, "USD", 2000), bal(ac, "USD", 2000)}},
		{name: "a lost dispute is a chargeback", given: []domain.Event{succeeded("s", 0, 2000), disputeOpened("d", 1), disputeClosed("l", 2, domain.DisputeLost)},
			want: []domain.Balance{bal(ac, "USD", 2000), bal(cb, "USD", 2000)}},
		{name: "an inquiry withholds nothing", given: []domain.Event{succeeded("s", 0, 2000), inquiry("i", 1)},
			want: []domain.Balance{bal(pb, "USD", 2000), bal(ac, "USD", 2000)}},
		{name: "a closed inquiry changes nothing and is not flagged", given: []domain.Event{succeeded("s", 0, 2000), inquiry("i", 1), disputeClosed("w", 2, domain.DisputeWon)},
			want: []domain.Balance{bal(pb, "USD", 2000), bal(ac, "USD", 2000)}},
		{name: "a fee once money moved", given: []domain.Event{succeeded("s", 0, 2000), fee("x", 1, 88, "USD")},
			want: []domain.Balance{bal(pb, "USD", 1912), bal(ac, "USD", 2000), bal(fe, "USD", 88)}},
		{name: "the latest fee is the fee", given: []domain.Event{succeeded("s", 0, 2000), fee("x", 1, 88, "USD"), fee("y", 2, 90, "USD")},
			want: []domain.Balance{bal(pb, "USD", 1910), bal(ac, "USD", 2000), bal(fe, "USD", 90)}},
		{name: "a fee in the settlement currency is booked in it", given: []domain.Event{succeeded("s", 0, 2000), fee("x", 1, 99, "EUR")},
			want: []domain.Balance{bal(pb, "EUR", -99), bal(fe, "EUR", 99), bal(pb, "USD", 2000), bal(ac, "USD", 2000)}},
		{name: "a chargeback snapshot without a stated amount takes what is left", given: []domain.Event{
			observed("o1", 0, domain.StatusPartiallyRefunded, 2000, 500), observed("o2", 1, domain.StatusChargeback, 2000, 500)},
			want: []domain.Balance{bal(ac, "USD", 2000), bal(rf, "USD", 500), bal(cb, "USD", 1500)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := domain.Fold(tt.given...)
			got := domain.BooksOf(p.State()).Balances()
			if !slices.Equal(got, tt.want) {
				t.Fatalf("balances = %v, want %v", got, tt.want)
			}
			if r := p.State().ReviewReasons; tt.name == "a closed inquiry changes nothing and is not flagged" && len(r) > 0 {
				t.Fatalf("review reasons = %v, want none", r)
			}
		})
	}
}

func TestAccountsNormalSides(t *testing.T) {
	for _, a := range domain.Accounts() {
		want := domain.Debit
		if a == domain.AccountSales {
			want = domain.Credit
		}
		if a.Normal() != want || !a.Valid() {
			t.Errorf("%s: normal %s valid %v", a, a.Normal(), a.Valid())
		}
	}
	if domain.Account("cash").Valid() {
		t.Error("cash is not in the chart")
	}
	if got := domain.AccountSales.NormalBalance(10, 30); got != 20 {
		t.Errorf("sales balance = %d, want 20", got)
	}
	if got := domain.AccountFees.NormalBalance(10, 30); got != -20 {
		t.Errorf("fees balance = %d, want -20", got)
	}
}

// arrive turns events into arrivals recorded one second apart, their event
// IDs the fact keys (as deterministic store IDs are).
func arrive(evs ...domain.Event) []domain.Arrival {
	out := make([]domain.Arrival, len(evs))
	for i, e := range evs {
		out[i] = domain.Arrival{Event: e, EventID: "id-" + e.EventMeta().Key(), RecordedAt: t0.Add(time.Hour + time.Duration(i)*time.Second)}
	}
	return out
}

// entryLine is one journal line with its entry's place, for comparing journals.
type sums map[string]int64 // "account/currency" → normal-side balance

func addEntry(s sums, e domain.JournalEntry) {
	for _, l := range e.Lines {
		s[fmt.Sprintf("%s/%s", l.Account, e.Currency)] += l.Account.NormalBalance(l.Debit, l.Credit)
	}
}

func sumWhere(j []domain.JournalEntry, keep func(domain.JournalEntry) bool) sums {
	s := sums{}
	for _, e := range j {
		if keep(e) {
			addEntry(s, e)
		}
	}
	for k, v := range s {
		if v == 0 {
			delete(s, k)
		}
	}
	return s
}

func booksSums(bs []domain.Balance) sums {
	s := sums{}
	for _, b := range bs {
		s[fmt.Sprintf("%s/%s", b.Account, b.Currency)] = b.Amount
	}
	return s
}

func all(domain.JournalEntry) bool { return true }

// TestJournalOutOfOrder: late facts are corrected by reversals, effective
// when the reversed entry was, recorded at the arrival; nothing is edited.
func TestJournalOutOfOrder(t *testing.T) {
	tests := []struct {
		name          string
		arrivals      []domain.Event
		wantReversals int
		want          []domain.Balance
	}{
		{name: "in order needs no reversal", arrivals: []domain.Event{succeeded("s", 1, 2000), refunded("r", 2, 500)},
			want: []domain.Balance{bal(pb, "USD", 1500), bal(ac, "USD", 2000), bal(rf, "USD", 500)}},
		{name: "refund before success", arrivals: []domain.Event{refunded("r", 2, 500), succeeded("s", 1, 2000)}, wantReversals: 1,
			want: []domain.Balance{bal(pb, "USD", 1500), bal(ac, "USD", 2000), bal(rf, "USD", 500)}},
		{name: "dispute closed before opened", arrivals: []domain.Event{succeeded("s", 1, 2000), disputeClosed("l", 3, domain.DisputeLost), disputeOpened("d", 2)}, wantReversals: 1,
			want: []domain.Balance{bal(ac, "USD", 2000), bal(cb, "USD", 2000)}},
		{name: "a late fee is its own entry", arrivals: []domain.Event{succeeded("s", 5, 2000), fee("x", 1, 88, "USD")},
			want: []domain.Balance{bal(pb, "USD", 1912), bal(ac, "USD", 2000), bal(fe, "USD", 88)}},
		{name: "a failure snapshot after the capture unwinds it at its own time", arrivals: []domain.Event{succeeded("s", 1, 2000), fee("x", 2, 88, "USD"), observed("o", 3, domain.StatusFailed, 0, 0)}},
		{name: "a second capture fact does not double the sales", arrivals: []domain.Event{succeeded("s", 1, 2000), fee("x", 2, 88, "USD"), observed("o", 3, domain.StatusFailed, 0, 0), succeeded("s2", 4, 2000)}, wantReversals: 0,
			want: []domain.Balance{bal(pb, "USD", 1912), bal(ac, "USD", 2000), bal(fe, "USD", 88)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := domain.Journal(arrive(tt.arrivals...))
			reversals := 0
			for i, e := range j {
				checkBalanced(t, e)
				if e.Reverses < 0 {
					continue
				}
				reversals++
				orig := j[e.Reverses]
				if e.Reverses >= i || !orig.EffectiveAt.Equal(e.EffectiveAt) || !e.RecordedAt.After(orig.RecordedAt) {
					t.Fatalf("reversal %d of %d: effective %v vs %v, recorded %v vs %v", i, e.Reverses, e.EffectiveAt, orig.EffectiveAt, e.RecordedAt, orig.RecordedAt)
				}
			}
			if reversals != tt.wantReversals {
				t.Fatalf("%d reversals, want %d: %+v", reversals, tt.wantReversals, j)
			}
			if got, want := sumWhere(j, all), booksSums(tt.want); !maps.Equal(got, want) {
				t.Fatalf("journal sums to %v, want %v", got, want)
			}
		})
	}
}

// TestJournalRecordedBasis: the entries recorded by T are the books as they
// were known when the facts stored by T had arrived.
func TestJournalRecordedBasis(t *testing.T) {
	arrivals := arrive(refunded("r", 2, 500), succeeded("s", 1, 2000), disputeOpened("d", 3))
	j := domain.Journal(arrivals)
	for k := range arrivals {
		cut := arrivals[k].RecordedAt
		got := sumWhere(j, func(e domain.JournalEntry) bool { return !e.RecordedAt.After(cut) })
		var known []domain.Event
		for _, a := range arrivals[:k+1] {
			known = append(known, a.Event)
		}
		if want := booksSums(domain.BooksOf(domain.Fold(known...).State()).Balances()); !maps.Equal(got, want) {
			t.Fatalf("recorded by arrival %d: %v, want %v", k, got, want)
		}
	}
}

func checkBalanced(t interface{ Fatalf(string, ...any) }, e domain.JournalEntry) {
	var d, c int64
	for _, l := range e.Lines {
		if (l.Debit > 0) == (l.Credit > 0) || l.Debit < 0 || l.Credit < 0 {
			t.Fatalf("line %+v must have exactly one positive side", l)
		}
		d, c = d+l.Debit, c+l.Credit
	}
	if d != c || len(e.Lines) < 2 {
		t.Fatalf("entry %+v does not balance: debits %d credits %d", e, d, c)
	}
}

// genLedgerEvents adds fees and inquiries to genEvents' facts.
func genLedgerEvents(t *rapid.T) []domain.Event {
	evs := genEvents(t)
	for i := range rapid.IntRange(0, 2).Draw(t, "fees") {
		c := rapid.SampledFrom([]domain.Currency{"USD", "EUR"}).Draw(t, "fee currency")
		evs = append(evs, fee(fmt.Sprintf("fee_%d", i), rapid.IntRange(0, 4).Draw(t, "fee sec"), rapid.Int64Range(0, 300).Draw(t, "fee"), c))
	}
	if rapid.Bool().Draw(t, "inquiry") {
		evs = append(evs, inquiry("inq", rapid.IntRange(0, 4).Draw(t, "inquiry sec")))
	}
	for i := range rapid.IntRange(0, 2).Draw(t, "snapshots with a fee") {
		st := rapid.SampledFrom(domain.Statuses()).Draw(t, "fee snapshot status")
		evs = append(evs, observedFee(fmt.Sprintf("obsfee_%d", i), rapid.IntRange(0, 4).Draw(t, "fee snapshot sec"), st,
			2000, rapid.Int64Range(0, 2000).Draw(t, "fee snapshot refunded"), rapid.Int64Range(0, 300).Draw(t, "fee snapshot fee")))
	}
	return evs
}

// observedFee is a snapshot that states the fee, in the payment's currency.
func observedFee(id string, sec int, st domain.Status, captured, refunded, fee int64) domain.Event {
	o := observed(id, sec, st, captured, refunded).(*domain.PaymentStatusObserved)
	o.Fee, o.FeeCurrency, o.FeeSource = fee, o.Currency, "test"
	return o
}

// TestSnapshotWithFee: a snapshot stating the fee books what the same
// snapshot and a FeeAssessed of its instant book, as one fact whose fee
// entry follows its money entry; a later snapshot without a fee keeps it.
func TestSnapshotWithFee(t *testing.T) {
	apart := []domain.Event{observed("o", 1, domain.StatusConfirmed, 2000, 0), fee("o:fee", 1, 88, "USD")}
	one := []domain.Event{observedFee("o", 1, domain.StatusConfirmed, 2000, 0, 88)}
	want := domain.BooksOf(domain.Fold(apart...).State()).Balances()
	if got := domain.BooksOf(domain.Fold(one...).State()).Balances(); !slices.Equal(got, want) {
		t.Fatalf("books = %v, want %v", got, want)
	}
	j := domain.Journal(arrive(one...))
	if len(j) != 2 || j[0].Lines[0].Account != domain.AccountProviderBalance || j[1].Lines[1].Account != domain.AccountFees {
		t.Fatalf("journal = %+v, want the capture then the fee", j)
	}
	for _, e := range j {
		if e.CauseEventID != j[0].CauseEventID || e.FactKey != "o" {
			t.Fatalf("entry %+v: want both caused by the snapshot", e)
		}
	}
	later := append(one, observed("o2", 2, domain.StatusConfirmed, 2000, 0))
	if s := domain.Fold(later...).State(); s.Fee != 88 || s.FeeCurrency != "USD" {
		t.Fatalf("a snapshot without a fee changed it: %d %s", s.Fee, s.FeeCurrency)
	}
	zero := append(one, observedFee("o3", 3, domain.StatusConfirmed, 2000, 0, 0))
	if s := domain.Fold(zero...).State(); s.Fee != 0 || s.FeeCurrency != "USD" {
		t.Fatalf("a stated fee of 0 = %d %s, want 0 USD", s.Fee, s.FeeCurrency)
	}
}

// TestJournalIsArrivalIndependent: for any fact set, every permutation and
// duplication of arrival, fed one arrival at a time, ends with the same
// balances and the same net amount per (account, effective time) — the
// books of the final fold — and every entry balances.
func TestJournalIsArrivalIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		facts := genLedgerEvents(t)
		arrival := rapid.Permutation(facts).Draw(t, "order")
		if len(facts) > 0 {
			for range rapid.IntRange(0, 4).Draw(t, "dups") {
				e := facts[rapid.IntRange(0, len(facts)-1).Draw(t, "dup")]
				at := rapid.IntRange(0, len(arrival)).Draw(t, "at")
				arrival = slices.Insert(arrival, at, e)
			}
		}
		reference := domain.Journal(arrive(facts...))
		j := domain.Journal(arrive(arrival...))
		for _, e := range j {
			checkBalanced(t, e)
		}
		final := booksSums(domain.BooksOf(domain.Fold(facts...).State()).Balances())
		if got := sumWhere(j, all); !maps.Equal(got, final) {
			t.Fatalf("journal sums to %v, want the books %v", got, final)
		}
		if got, want := byEffectiveTime(j), byEffectiveTime(reference); !maps.Equal(got, want) {
			t.Fatalf("net per (account, effective time) = %v, want %v", got, want)
		}
	})
}

func byEffectiveTime(j []domain.JournalEntry) map[string]int64 {
	out := map[string]int64{}
	for _, e := range j {
		for _, l := range e.Lines {
			k := fmt.Sprintf("%s/%s@%s", l.Account, e.Currency, e.EffectiveAt.Format(time.RFC3339Nano))
			out[k] += l.Debit - l.Credit
			if out[k] == 0 {
				delete(out, k)
			}
		}
	}
	return out
}

// TestJournalIsDeterministic: the same arrivals derive the same journal, so
// a rebuild reproduces every entry.
func TestJournalIsDeterministic(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		arrivals := arrive(rapid.Permutation(genLedgerEvents(t)).Draw(t, "order")...)
		a, b := domain.Journal(arrivals), domain.Journal(slices.Clone(arrivals))
		if len(a) != len(b) {
			t.Fatalf("%d entries then %d", len(a), len(b))
		}
		for i := range a {
			if a[i].Arrival != b[i].Arrival || a[i].Seq != b[i].Seq || a[i].Reverses != b[i].Reverses ||
				!slices.Equal(a[i].Lines, b[i].Lines) || a[i].CauseEventID != b[i].CauseEventID {
				t.Fatalf("entry %d differs: %+v vs %+v", i, a[i], b[i])
			}
		}
	})
}
