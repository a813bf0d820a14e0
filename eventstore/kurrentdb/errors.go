package kurrentdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payledger/payledger/domain"
)

// translate is the one place client errors are classified. A wrong expected
// revision wraps domain.ErrConflict; a server that cannot be reached or is
// not ready wraps domain.ErrUnavailable (the API answers 503 and the
// provider retries); the caller's own cancellation stays a context error;
// anything else keeps its cause.
//
// It finds the client's *esdb.Error anywhere in the chain with errors.As:
// esdb.FromError only looks at the top, and the client wraps some of its
// errors (delete, tombstone, stream setup) with fmt.Errorf, which it then
// reports as ErrorCodeUnknown.
func translate(op string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%s: %w", op, err)
	case hasCode(err, esdb.ErrorCodeWrongExpectedVersion):
		return fmt.Errorf("%s: %w: %w", op, domain.ErrConflict, err)
	case unavailable(err):
		return fmt.Errorf("%s: %w: %w", op, domain.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// hasCode reports whether err's chain holds an *esdb.Error with code.
func hasCode(err error, code esdb.ErrorCode) bool {
	esErr, ok := errors.AsType[*esdb.Error](err)
	return ok && esErr.Code() == code
}

// isNotFound reports the client's answer to reading a missing stream.
func isNotFound(err error) bool {
	return hasCode(err, esdb.ErrorCodeResourceNotFound)
}

// unavailable reports whether err says the call got no answer from a ready
// server: it could not connect, the connection dropped, the server was not
// ready or too busy, the call hit the client's deadline, or the client gave
// up on discovery. Such a call may be retried, and its append may or may not
// have landed (see Append for why a retry is still safe).
func unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false // the caller's own ctx (DeadlineExceeded is a net.Error too)
	}
	if esErr, ok := errors.AsType[*esdb.Error](err); ok {
		switch esErr.Code() {
		case esdb.ErrorUnavailable, esdb.ErrorCodeDeadlineExceeded, esdb.ErrorCodeConnectionClosed,
			esdb.ErrorCodeNotLeader, esdb.ErrorAborted:
			return true
		}
	}
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Aborted:
		return true
	}
	if _, ok := errors.AsType[net.Error](err); ok {
		return true
	}
	return errors.Is(err, errClientDead) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, io.ErrUnexpectedEOF)
}
