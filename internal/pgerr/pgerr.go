// Package pgerr classifies pgx errors the same way for every package that
// talks to Postgres: whether an error means Postgres could not be reached
// (so the caller should answer 503 and the client retry) rather than that it
// rejected the statement.
package pgerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payledger/payledger/domain"
)

// Unavailable reports whether err says Postgres could not be reached or
// dropped the connection, as opposed to rejecting the statement.
func Unavailable(err error) bool {
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok {
		return strings.HasPrefix(pgErr.Code, "08") || // connection exception
			strings.HasPrefix(pgErr.Code, "53") || // insufficient resources: too many connections, out of memory
			pgErr.Code == "57P01" || pgErr.Code == "57P02" || pgErr.Code == "57P03" // shutting down, starting up
	}
	if _, ok := errors.AsType[*pgconn.ConnectError](err); ok {
		return true
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	// SafeToRetry: the statement never reached the server (e.g. a dead
	// pooled connection). EOFs: the server went away mid-statement.
	return pgconn.SafeToRetry(err) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Wrap prefixes err with op and, when Postgres was unreachable, wraps
// domain.ErrUnavailable too. The caller's own cancellation stays a plain
// context error: it is not an outage.
func Wrap(op string, err error) error {
	if err == nil {
		return nil
	}
	if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) && Unavailable(err) {
		return fmt.Errorf("%s: %w: %w", op, domain.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
