package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgerr"
)

// translate classifies the pgx errors that are not an append's outcome
// (decodeError has those): unreachable wraps domain.ErrUnavailable, a value
// Postgres rejects is KindInvalid, the caller's own cancellation stays a
// context error, anything else keeps its cause.
func translate(op string, err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%s: %w", op, err)
	}
	if pgerr.Unavailable(err) {
		return fmt.Errorf("%s: %w: %w", op, domain.ErrUnavailable, err)
	}
	if pgErr, ok := errors.AsType[*pgconn.PgError](err); ok && strings.HasPrefix(pgErr.Code, "22") {
		// Class 22, data exception: e.g. event data that is not JSON.
		return domain.Invalid(op, "the event store rejected a value", err)
	}
	return fmt.Errorf("%s: %w", op, err)
}
