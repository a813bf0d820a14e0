package kurrenttest_test

import (
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"google.golang.org/grpc/codes"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

func TestSetUnavailable(t *testing.T) {
	e := newEnv(t)
	e.mustAppend("S", esdb.NoStream{}, "e0")
	e.srv.SetUnavailable(true)
	if _, err := e.append("S", esdb.Any{}, "e1"); code(err) != esdb.ErrorUnavailable {
		t.Errorf("append: %v, want Unavailable", err)
	}
	if _, err := e.read("S", esdb.ReadStreamOptions{}, 10); code(err) != esdb.ErrorUnavailable {
		t.Errorf("read: %v, want Unavailable", err)
	}
	if _, err := e.c.SubscribeToAll(e.ctx, esdb.SubscribeToAllOptions{}); code(err) != esdb.ErrorUnavailable {
		t.Errorf("subscribe: %v, want Unavailable", err)
	}
	if _, err := e.c.DeleteStream(e.ctx, "S", esdb.DeleteStreamOptions{ExpectedRevision: esdb.Any{}}); code(err) != esdb.ErrorUnavailable {
		t.Errorf("delete: %v, want Unavailable", err)
	}
	// Discovery keeps working, so the same client recovers.
	e.srv.SetUnavailable(false)
	e.mustAppend("S", esdb.Any{}, "e2")
	if got := e.names("S"); got != "e0 e2" {
		t.Errorf("stream %q, want %q", got, "e0 e2")
	}
}

func TestWithUnavailable(t *testing.T) {
	e := newEnv(t, kurrenttest.WithUnavailable())
	if _, err := e.append("S", esdb.NoStream{}, "e0"); code(err) != esdb.ErrorUnavailable {
		t.Fatalf("append: %v, want Unavailable", err)
	}
	e.srv.SetUnavailable(false)
	e.mustAppend("S", esdb.NoStream{}, "e0")
}

// TestInjectFault: one call fails as injected; whether the write happened
// depends on the fault; the next call is served normally. A lost reply is
// the case exact-revision retries exist for.
func TestInjectFault(t *testing.T) {
	hang := 200 * time.Millisecond
	tests := []struct {
		fault    kurrenttest.Fault
		deadline *time.Duration
		wantCode esdb.ErrorCode
		written  bool
	}{
		{kurrenttest.FaultUnavailable, nil, esdb.ErrorUnavailable, false},
		{kurrenttest.FaultDropConnection, nil, esdb.ErrorUnavailable, false},
		{kurrenttest.FaultLoseReply, nil, esdb.ErrorUnavailable, true},
		{kurrenttest.FaultHang, &hang, esdb.ErrorCodeDeadlineExceeded, true},
	}
	for _, tt := range tests {
		t.Run(faultName(tt.fault), func(t *testing.T) {
			e := newEnv(t, kurrenttest.WithFault(kurrenttest.RPCAppend, tt.fault))
			opts := esdb.AppendToStreamOptions{ExpectedRevision: esdb.NoStream{}, Deadline: tt.deadline}
			_, err := e.c.AppendToStream(e.ctx, "S", opts, events("A")...)
			if code(err) != tt.wantCode {
				t.Fatalf("append: %v, want code %d", err, tt.wantCode)
			}
			want := map[bool]string{true: "A", false: ""}[tt.written]
			if got := e.names("S"); got != want {
				t.Fatalf("stream %q after the fault, want %q", got, want)
			}
			// The retry with the same expected revision is safe either way.
			w := e.mustAppend("S", esdb.NoStream{}, "A")
			if pos := positions(e, "S")["A"]; w.NextExpectedVersion != 0 || w.CommitPosition != pos.Commit {
				t.Errorf("retry: %+v, want revision 0 at %d", w, pos.Commit)
			}
			if got := e.names("S"); got != "A" {
				t.Errorf("stream %q after the retry, want one A", got)
			}
		})
	}
	t.Run("faults queue per RPC and apply in order", func(t *testing.T) {
		e := newEnv(t)
		e.mustAppend("S", esdb.NoStream{}, "e0")
		e.srv.InjectFault(kurrenttest.RPCRead, kurrenttest.FaultUnavailable)
		e.srv.InjectFault(kurrenttest.RPCRead, kurrenttest.FaultDropConnection)
		e.srv.InjectFault(kurrenttest.RPCDelete, kurrenttest.FaultLoseReply)
		for i := range 2 {
			if _, err := e.read("S", esdb.ReadStreamOptions{}, 10); code(err) != esdb.ErrorUnavailable {
				t.Errorf("read %d: %v, want Unavailable", i, err)
			}
		}
		_, err := e.c.DeleteStream(e.ctx, "S", esdb.DeleteStreamOptions{ExpectedRevision: esdb.Any{}})
		if code(err) != esdb.ErrorUnavailable {
			t.Errorf("delete: %v, want Unavailable", err)
		}
		if got := e.names("S"); got != "" { // the delete happened
			t.Errorf("stream %q, want deleted", got)
		}
	})
	t.Run("a failed discovery call is retried by the client", func(t *testing.T) {
		e := newEnv(t, kurrenttest.WithFault(kurrenttest.RPCFeatures, kurrenttest.FaultUnavailable))
		e.mustAppend("S", esdb.NoStream{}, "e0")
	})
}

func faultName(f kurrenttest.Fault) string {
	return map[kurrenttest.Fault]string{
		kurrenttest.FaultUnavailable:    "unavailable",
		kurrenttest.FaultDropConnection: "drop connection",
		kurrenttest.FaultLoseReply:      "lose reply",
		kurrenttest.FaultHang:           "hang",
	}[f]
}

func TestDropConnections(t *testing.T) {
	e := newEnv(t)
	sub := e.subscribeAll(esdb.SubscribeToAllOptions{From: esdb.End{}})
	expect(t, sub, "caught-up")
	if n := e.srv.DropConnections(); n != 1 {
		t.Errorf("dropped %d connections, want the client's one", n)
	}
	expect(t, sub, "dropped "+codes.Unavailable.String())
	e.mustAppend("S", esdb.NoStream{}, "e0") // the client reconnects
	sub = e.subscribeAll(esdb.SubscribeToAllOptions{From: esdb.Start{}})
	expect(t, sub, "$epoch-information", "e0", "caught-up")
}

func TestCacheBytes(t *testing.T) {
	// Each entry for stream "s" costs 28 + 24 bytes: two fit in 104.
	e := newEnv(t, kurrenttest.WithCacheBytes(104))
	for _, n := range []string{"A", "B", "C"} {
		e.mustAppend("s", esdb.Any{}, n)
	}
	e.mustAppend("s", esdb.Any{}, "A") // evicted: a duplicate
	e.mustAppend("s", esdb.Any{}, "C") // still cached: idempotent
	if got := e.names("s"); got != "A B C A" {
		t.Errorf("stream %q, want %q", got, "A B C A")
	}
}
