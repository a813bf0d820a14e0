package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// TestDecode: every append statement's row and error comes out as the same
// outcome, and every outcome as the same answer.
func TestDecode(t *testing.T) {
	const stream = "payment-stripe-pi_3Nk-x_Ydecode"
	i := func(v int64) *int64 { return &v }
	s := func(v string) *string { return &v }
	pgErr := func(code, detail string) error {
		return fmt.Errorf("query: %w", &pgconn.PgError{Code: code, Detail: detail})
	}
	tests := []struct {
		name     string
		expected eventstore.ExpectedRevision
		row      *appendRow
		err      error
		want     outcomeKind
		wantRes  eventstore.AppendResult
		fails    bool // the answer is an error of kind wantKind
		wantKind domain.Kind
		wantErr  error // when fails: a sentinel it wraps
	}{
		{name: "appended", row: &appendRow{revision: i(3), commitTx: i(900), prepareSeq: i(7)}, want: appended,
			wantRes: eventstore.AppendResult{Revision: 3, Position: eventstore.Position{Commit: 900, Prepare: 7}}},
		{name: "duplicate", row: &appendRow{storedStream: s(stream), storedRevision: i(1)}, want: duplicate,
			wantRes: eventstore.AppendResult{Duplicate: true, Revision: 1}},
		{name: "duplicate wins over a conflict", expected: eventstore.Exact(5),
			row: &appendRow{storedStream: s(stream), storedRevision: i(1), conflictHead: i(2)}, want: duplicate,
			wantRes: eventstore.AppendResult{Duplicate: true, Revision: 1}},
		{name: "stored elsewhere", row: &appendRow{storedStream: s("payment-stripe-pi_other"), storedRevision: i(0)},
			want: storedElsewhere, fails: true},
		{name: "conflict", expected: eventstore.Exact(0), row: &appendRow{conflictHead: i(-1)}, want: conflict, fails: true, wantKind: domain.KindConflict, wantErr: domain.ErrConflict},
		{name: "retry", row: &appendRow{retry: true}, want: retry, fails: true},
		{name: "no outcome", row: &appendRow{}, want: undecided, fails: true},
		{name: "ES001", err: pgErr(codeStoredAlready, "4"), want: duplicate,
			wantRes: eventstore.AppendResult{Duplicate: true, Revision: 4}},
		{name: "ES001 unreadable", err: pgErr(codeStoredAlready, "x"), want: failed, fails: true},
		{name: "ES002 any", err: pgErr(codeRevisionTaken, ""), want: retry, fails: true},
		{name: "ES002 exact", expected: eventstore.Exact(1), err: pgErr(codeRevisionTaken, ""), want: conflict, fails: true, wantKind: domain.KindConflict, wantErr: domain.ErrConflict},
		{name: "ES003", err: pgErr(codeOtherStream, ""), want: storedElsewhere, fails: true},
		{name: "ES004", err: pgErr(codeGroupNotInserted, ""), want: retry, fails: true},
		{name: "ES005", err: pgErr(codeGroupYoungerHead, ""), want: retry, fails: true},
		{name: "deadlock", err: pgErr(codeDeadlock, ""), want: retry, fails: true},
		{name: "serialization", err: pgErr(codeSerialization, ""), want: retry, fails: true},
		{name: "invalid json", err: pgErr("22P02", ""), want: failed, fails: true, wantKind: domain.KindInvalid},
		{name: "unreachable", err: pgErr("08006", ""), want: failed, fails: true, wantKind: domain.KindUnavailable, wantErr: domain.ErrUnavailable},
		{name: "other", err: errors.New("boom"), want: failed, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := appendCall{op: "postgres: append " + stream, stream: stream, expected: tt.expected,
				events: []newEvent{{typ: "t", data: []byte(`{}`)}}}
			var o outcome
			if tt.row != nil {
				o = c.decodeRow(*tt.row)
			} else {
				o = c.decodeError(tt.err)
			}
			if o.kind != tt.want {
				t.Fatalf("outcome %s, want %s", o.kind, tt.want)
			}
			res, err := c.answer(o)
			switch {
			case !tt.fails && (err != nil || res != tt.wantRes):
				t.Fatalf("answer = %+v, %v; want %+v", res, err, tt.wantRes)
			case tt.fails && (err == nil || domain.KindOf(err) != tt.wantKind):
				t.Fatalf("answer = %+v, %v; want an error of kind %v", res, err, tt.wantKind)
			case tt.wantErr != nil && !errors.Is(err, tt.wantErr):
				t.Fatalf("answer = %v, want one wrapping %v", err, tt.wantErr)
			}
		})
	}
}
