package postgres

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

// translate is the one place pgx errors are classified. A store that cannot
// be reached wraps domain.ErrUnavailable (the API answers 503, the provider
// retries); a value Postgres rejects is KindInvalid; the caller's own
// cancellation stays a context error; anything else keeps its cause.
func translate(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	if unavailable(err) {
		return fmt.Errorf("%s: %w: %w", op, domain.ErrUnavailable, err)
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && strings.HasPrefix(pgErr.Code, "22") {
		// Class 22, data exception: e.g. event data that is not JSON.
		return domain.Invalid(op, "the event store rejected a value", err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// unavailable reports whether err says Postgres could not be reached or
// dropped the connection, as opposed to rejecting the statement.
func unavailable(err error) bool {
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
