package kurrentdb

import (
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
)

// errStoreClosed is returned by calls made after Store.Close.
var errStoreClosed = errors.New("kurrentdb: store closed")

// errClientDead is what a call still waiting on a client gets once that
// client is known to have closed itself; unavailable reports it, so the
// call is retried on the replacement.
var errClientDead = errors.New("kurrentdb: the client closed itself after failing to reach the server")

// discoveryFailed is how the esdb client (v4.2.0, impl.go discoverNode)
// words the error of the one call whose discovery failed, at which point its
// connection state machine has exited. It carries the code of the last
// network error, so the text is the only mark.
const discoveryFailed = "maximum discovery attempt count reached"

// conn holds the current client and replaces it once the esdb library has
// closed it for good. Calls wait through await, so a call stuck inside a dead
// client is released and retried on the new one; a dead or busy client is
// never closed, since Close panics or races the calls still in it
// (ARCHITECTURE.md, "Living with the client's connection handling").
type conn struct {
	mu      sync.Mutex
	cur     *client
	redial  func() (*esdb.Client, error)
	suspect bool // cur's last call got no answer: do not Close it
	closed  bool
}

// client is one esdb client and its fate.
type client struct {
	*esdb.Client
	dead     chan struct{} // closed once the library closed the client for good
	deadOnce sync.Once

	// Guarded by conn.mu.
	inflight      int  // calls between hold and release
	closeWhenIdle bool // Close found it busy: the last release closes it
}

func newClient(c *esdb.Client) *client {
	return &client{Client: c, dead: make(chan struct{})}
}

func (c *client) markDead() { c.deadOnce.Do(func() { close(c.dead) }) }

func newConn(c *esdb.Client, redial func() (*esdb.Client, error)) *conn {
	return &conn{cur: newClient(c), redial: redial}
}

// get returns the client to use for one call, held until release.
func (c *conn) get() (*client, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.holdLocked(c.cur) {
		return nil, errStoreClosed
	}
	return c.cur, nil
}

// release ends a call counted by get or hold. The last call out of a
// client that Close found busy closes it, unless the call left it unsafe
// to close.
func (c *conn) release(used *client) {
	c.mu.Lock()
	used.inflight--
	closeNow := used.inflight == 0 && used.closeWhenIdle && c.closable(used)
	if closeNow {
		used.closeWhenIdle = false
	}
	c.mu.Unlock()
	if closeNow {
		_ = used.Close()
	}
}

// closable reports whether used may be closed; c.mu is held.
func (c *conn) closable(used *client) bool {
	select {
	case <-used.dead:
		return false
	default:
	}
	return !(used == c.cur && c.suspect)
}

// hold counts one more call on used, unless the store is closed.
func (c *conn) hold(used *client) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holdLocked(used)
}

// holdLocked is hold with c.mu held.
func (c *conn) holdLocked(used *client) bool {
	if c.closed {
		return false
	}
	used.inflight++
	return true
}

// observe records how a call on used ended. When err shows that the library
// closed used for good, used is declared dead (releasing the calls stuck on
// it) and, unless another call did so first, a new client replaces it.
func (c *conn) observe(used *client, err error) {
	dead := isDead(err)
	if dead {
		used.markDead()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.cur != used {
		return
	}
	c.suspect = unavailable(err)
	if !dead || c.redial == nil {
		return
	}
	fresh, rerr := c.redial()
	if rerr != nil {
		return // the next call finds the client closed and tries again
	}
	c.cur, c.suspect = newClient(fresh), false
}

// isDead reports whether err shows that the client has closed itself.
func isDead(err error) bool {
	if errors.Is(err, errClientDead) || hasCode(err, esdb.ErrorCodeConnectionClosed) {
		return true
	}
	esErr, ok := errors.AsType[*esdb.Error](err)
	return ok && strings.Contains(esErr.Error(), discoveryFailed)
}

// close closes the client unless that is unsafe (see conn).
func (c *conn) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	if !c.closable(c.cur) {
		return nil
	}
	if c.cur.inflight > 0 {
		c.cur.closeWhenIdle = true
		return nil
	}
	if err := c.cur.Close(); err != nil {
		return fmt.Errorf("kurrentdb: close: %w", err)
	}
	return nil
}

// esdbScheme rewrites the kurrentdb:// and kurrent:// schemes (and their
// +discover forms), which KurrentDB's newer clients accept, to the esdb://
// this client parses. Other strings are left for the parser to judge.
func esdbScheme(s string) string {
	scheme, rest, ok := strings.Cut(s, "://")
	if !ok {
		return s
	}
	base, discover := strings.CutSuffix(strings.ToLower(scheme), "+discover")
	switch base {
	case "kurrentdb", "kurrent", "esdb":
		if discover {
			return "esdb+discover://" + rest
		}
		return "esdb://" + rest
	}
	return s
}

// redact drops the connection string from a parse error: url.Parse quotes
// it whole, password included.
func redact(err error) error {
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// clientLogger routes the esdb client's log lines to logger at debug level:
// every failure the client logs is also returned to the caller, who handles
// it, so logging it louder here would report each error twice.
func clientLogger(logger *slog.Logger) esdb.LoggingFunc {
	if logger == nil {
		return esdb.NoopLogging()
	}
	return func(level esdb.LogLevel, format string, args ...any) {
		logger.Debug(fmt.Sprintf(format, args...), "component", "esdb", "esdb_level", level)
	}
}
