package kurrentdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore/kurrenttest"
)

// TestTranslate covers the errors that need no server; the client's own
// *esdb.Error values (their codes cannot be set from outside the package)
// are translated in the tests against kurrenttest.
func TestTranslate(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: &net.OpError{Err: syscall.ECONNREFUSED}}
	tests := []struct {
		name     string
		err      error
		wantKind domain.Kind
		wantIs   error
	}{
		{name: "unavailable", err: status.Error(codes.Unavailable, "connection refused"), wantKind: domain.KindUnavailable, wantIs: domain.ErrUnavailable},
		{name: "deadline", err: status.Error(codes.DeadlineExceeded, "deadline"), wantKind: domain.KindUnavailable, wantIs: domain.ErrUnavailable},
		{name: "aborted", err: status.Error(codes.Aborted, "write timeout"), wantKind: domain.KindUnavailable, wantIs: domain.ErrUnavailable},
		{name: "wrapped-status", err: fmt.Errorf("could not send: %w", status.Error(codes.Unavailable, "eof")), wantKind: domain.KindUnavailable, wantIs: domain.ErrUnavailable},
		{name: "esdb-unknown-wrapping-status", err: mustFromError(status.Error(codes.Unavailable, "x")), wantKind: domain.KindUnavailable, wantIs: domain.ErrUnavailable},
		{name: "connection-refused", err: refused, wantKind: domain.KindUnavailable, wantIs: domain.ErrUnavailable},
		{name: "unexpected-eof", err: io.ErrUnexpectedEOF, wantKind: domain.KindUnavailable, wantIs: domain.ErrUnavailable},
		{name: "caller-cancelled", err: context.Canceled, wantKind: domain.KindInternal, wantIs: context.Canceled},
		{name: "caller-deadline", err: fmt.Errorf("x: %w", context.DeadlineExceeded), wantKind: domain.KindInternal, wantIs: context.DeadlineExceeded},
		{name: "permission-denied", err: status.Error(codes.PermissionDenied, "access denied"), wantKind: domain.KindInternal},
		{name: "plain", err: errors.New("boom"), wantKind: domain.KindInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := translate("kurrentdb: test", tt.err)
			if domain.KindOf(got) != tt.wantKind {
				t.Errorf("translate(%v) = %v, kind %v; want kind %v", tt.err, got, domain.KindOf(got), tt.wantKind)
			}
			if tt.wantIs != nil && !errors.Is(got, tt.wantIs) {
				t.Errorf("translate(%v) = %v, want it to wrap %v", tt.err, got, tt.wantIs)
			}
			if !errors.Is(got, tt.err) {
				t.Errorf("translate(%v) = %v lost its cause", tt.err, got)
			}
		})
	}
	if translate("op", nil) != nil {
		t.Error("translate(nil) is not nil")
	}
}

func mustFromError(err error) error {
	esErr, _ := esdb.FromError(err)
	return esErr
}

// TestTranslateClientErrors translates the client's own errors, from real
// calls to kurrenttest, including ones the client wraps with fmt.Errorf (its
// delete errors), which esdb.FromError misreports as ErrorCodeUnknown.
func TestTranslateClientErrors(t *testing.T) {
	srv, err := kurrenttest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cfg, err := esdb.ParseConnectionString(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = esdb.NoopLogging()
	client, err := esdb.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := t.Context()
	ev := esdb.EventData{EventID: uuid.New(), EventType: "payment.created.v1", ContentType: esdb.ContentTypeJson, Data: []byte(`{}`)}

	_, wrongVersion := client.AppendToStream(ctx, "payment-stripe-pi_3Nk-x_Y1", esdb.AppendToStreamOptions{ExpectedRevision: esdb.StreamRevision{Value: 4}}, ev)
	if _, err := client.TombstoneStream(ctx, "payment-stripe-pi_3Nk-x_Y2", esdb.TombstoneStreamOptions{ExpectedRevision: esdb.Any{}}); err != nil {
		t.Fatal(err)
	}
	_, deleted := client.DeleteStream(ctx, "payment-stripe-pi_3Nk-x_Y2", esdb.DeleteStreamOptions{ExpectedRevision: esdb.Any{}})
	srv.SetUnavailable(true)
	_, deleteUnavailable := client.DeleteStream(ctx, "payment-stripe-pi_3Nk-x_Y3", esdb.DeleteStreamOptions{ExpectedRevision: esdb.Any{}})
	srv.SetUnavailable(false)

	tests := []struct {
		name     string
		err      error
		wrapped  bool // the client wrapped its *esdb.Error, so FromError says Unknown
		wantKind domain.Kind
		wantIs   error
	}{
		{name: "wrong-expected-version", err: wrongVersion, wantKind: domain.KindConflict, wantIs: domain.ErrConflict},
		{name: "wrong-expected-version-wrapped", err: fmt.Errorf("x: %w", wrongVersion), wrapped: true, wantKind: domain.KindConflict, wantIs: domain.ErrConflict},
		{name: "delete-unavailable", err: deleteUnavailable, wrapped: true, wantKind: domain.KindUnavailable, wantIs: domain.ErrUnavailable},
		{name: "delete-stream-deleted", err: deleted, wrapped: true, wantKind: domain.KindInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.err == nil {
				t.Fatal("the call succeeded; the test needs its error")
			}
			if esErr, _ := esdb.FromError(tt.err); tt.wrapped != (esErr.Code() == esdb.ErrorCodeUnknown) {
				t.Errorf("esdb.FromError(%v).Code() = %v: the client's wrapping changed", tt.err, esErr.Code())
			}
			got := translate("kurrentdb: test", tt.err)
			if domain.KindOf(got) != tt.wantKind || tt.wantIs != nil && !errors.Is(got, tt.wantIs) {
				t.Fatalf("translate(%v) = %v (kind %v), want kind %v wrapping %v", tt.err, got, domain.KindOf(got), tt.wantKind, tt.wantIs)
			}
		})
	}
	if !hasCode(deleted, esdb.ErrorCodeStreamDeleted) {
		t.Errorf("hasCode did not find StreamDeleted in %v", deleted)
	}
}

// TestIsDeadOnDiscoveryFailure pins how a dead client is recognised: the
// call whose discovery fails gets the client's "maximum discovery attempt
// count reached" error, every later call ErrorCodeConnectionClosed.
func TestIsDeadOnDiscoveryFailure(t *testing.T) {
	srv, err := kurrenttest.NewServer()
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.Stop()
	cfg, err := esdb.ParseConnectionString(srv.URL() + "&maxDiscoverAttempts=1&discoveryInterval=10")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = esdb.NoopLogging()
	c, err := esdb.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"discovery", "closed"} {
		_, err := c.ReadStream(t.Context(), "payment-stripe-pi_3Nk-x_Y", esdb.ReadStreamOptions{}, 1)
		if !isDead(err) || !unavailable(err) {
			t.Fatalf("call %d (%s): isDead(%v) = %t, unavailable %t; want both", i, want, err, isDead(err), unavailable(err))
		}
	}
	for _, err := range []error{nil, status.Error(codes.Unavailable, "refused"), errors.New("boom")} {
		if isDead(err) {
			t.Errorf("isDead(%v) = true", err)
		}
	}
}
