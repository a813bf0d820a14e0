package kurrentdb

import (
	"context"
	"errors"
	"fmt"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payledger/payledger/internal/backoff"
)

// retry runs call until it gets an answer, at most CallAttempts times, and
// translates the last error. Only calls that got no answer (see unavailable)
// are repeated, and always unchanged: for an append that means with the same
// expected revision, which is what makes repeating a write that did land
// safe (the server checks an exact expectation below the head against the
// stored events). A client the library closed for good is replaced between
// attempts.
func (s *Store) retry(ctx context.Context, op string, call func(ctx context.Context, c *esdb.Client) error) error {
	var err error
	for attempt := range s.opts.CallAttempts {
		if attempt > 0 && backoff.Sleep(ctx, s.opts.retries().Delay(attempt)) != nil {
			break
		}
		if err = s.attempt(ctx, call); err == nil {
			return nil
		}
		if errors.Is(err, errStoreClosed) {
			return fmt.Errorf("%s: %w", op, err)
		}
		if ctx.Err() != nil || !unavailable(err) {
			break
		}
	}
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", op, context.Cause(ctx))
	}
	return translate(op, err)
}

// attempt makes one call with the current client, and tells conn how it
// went (it replaces a client found closed for good).
func (s *Store) attempt(ctx context.Context, call func(ctx context.Context, c *esdb.Client) error) error {
	c, err := s.conn.get()
	if err != nil {
		return err
	}
	err = await(ctx, c.dead, func() error {
		// In the call's goroutine: it may outlive await (see conn).
		defer s.conn.release(c)
		return call(ctx, c.Client)
	})
	s.conn.observe(c, err)
	if stuck(err) {
		s.nudge(ctx, c)
	}
	return err
}

// stuck reports a read that failed on a broken connection without the
// client noticing: ReadStream returns the error of opening its gRPC stream
// as it is, without the handling that makes the client rediscover the
// server, so until gRPC's own reconnect backoff (up to two minutes) expires
// every read fails fast even after the server is back.
func stuck(err error) bool {
	_, handled := errors.AsType[*esdb.Error](err)
	return !handled && status.Code(err) == codes.Unavailable
}

// nudge makes the client notice a broken connection: opening a subscription
// goes through the client's error handling, which schedules rediscovery
// for the next call. If the connection works again, the subscription is
// simply closed.
func (s *Store) nudge(ctx context.Context, c *client) {
	if !s.conn.hold(c) {
		return // closed meanwhile
	}
	_ = await(ctx, c.dead, func() error {
		defer s.conn.release(c)
		sub, err := c.SubscribeToStream(ctx, pingStream, esdb.SubscribeToStreamOptions{From: esdb.End{}})
		if err == nil {
			_ = sub.Close()
		}
		return err
	})
}

// await runs f in its own goroutine and waits for it, for ctx, or for the
// client to be declared dead. The client ignores ctx while it finds a
// connection (it waits on an internal channel, and discovery sleeps between
// attempts), and a call caught waiting there when discovery fails waits for
// ever (see conn). f must stop by itself once ctx is done; the client's
// gRPC calls do.
func await(ctx context.Context, dead <-chan struct{}, f func() error) error {
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	case <-dead:
		select {
		case err := <-done: // finished after all: its answer counts
			return err
		default:
			return errClientDead
		}
	}
}
