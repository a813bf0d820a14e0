package pgerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payledger/payledger/domain"
)

func TestWrap(t *testing.T) {
	tests := []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"admin shutdown", &pgconn.PgError{Code: "57P01"}, true},
		{"cannot connect now", &pgconn.PgError{Code: "57P03"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"too many connections", &pgconn.PgError{Code: "53300"}, true},
		{"server went away", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{"unique violation", &pgconn.PgError{Code: "23505"}, false},
		{"syntax error", &pgconn.PgError{Code: "42601"}, false},
		{"no rows", pgx.ErrNoRows, false},
		{"caller cancelled", context.Canceled, false},
		{"caller's deadline", fmt.Errorf("query: %w", context.DeadlineExceeded), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Wrap("op", tt.err)
			if got := errors.Is(err, domain.ErrUnavailable); got != tt.unavailable {
				t.Fatalf("Wrap(%v) unavailable = %t, want %t", tt.err, got, tt.unavailable)
			}
			if !errors.Is(err, tt.err) {
				t.Fatalf("Wrap(%v) = %v lost the cause", tt.err, err)
			}
		})
	}
	if Wrap("op", nil) != nil {
		t.Fatal("Wrap(nil) is not nil")
	}
}

// TestUnreachable: a server nobody listens on is an outage.
func TestUnreachable(t *testing.T) {
	conn, err := pgx.Connect(t.Context(), "postgres://postgres@127.0.0.1:1/postgres?connect_timeout=2")
	if err == nil {
		_ = conn.Close(t.Context())
		t.Fatal("connected to port 1")
	}
	if !Unavailable(err) {
		t.Fatalf("Unavailable(%v) = false", err)
	}
}
