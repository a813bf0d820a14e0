package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/payledger/payledger/eventstore/kurrenttest"
)

const (
	defaultDown = 2 * time.Second
	maxDown     = time.Minute
	// startTries bounds how long a restart waits for its port to be free
	// again (something else may have bound it while it was closed).
	startTries = 100
	startPause = 100 * time.Millisecond
)

// controller applies faults to the node, one at a time, and counts them.
type controller struct {
	srv  *kurrenttest.Server
	log  io.Writer
	done chan struct{} // closed by stop: a restart in progress gives up

	mu       sync.Mutex // one fault at a time; guards the counters
	restarts int
	drops    int
}

func newController(srv *kurrenttest.Server, log io.Writer) *controller {
	return &controller{srv: srv, log: log, done: make(chan struct{})}
}

// stop makes a restart in progress give up waiting; call it before closing
// the server, for good.
func (c *controller) stop() { close(c.done) }

// pause sleeps for d, or less when the controller is stopped.
func (c *controller) pause(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.done:
	}
}

// faultReply is what a fault endpoint answers.
type faultReply struct {
	Fault             string `json:"fault"`
	ConnectionsClosed int    `json:"connections_closed"`
	DownMillis        int64  `json:"down_ms,omitempty"`
	Count             int    `json:"count"` // faults of this kind applied so far
}

// statusReply is what GET /status answers.
type statusReply struct {
	URL         string `json:"url"`
	Connections int    `json:"connections"`
	Restarts    int    `json:"restarts"`
	Drops       int    `json:"drops"`
	// Prefix and Tally audit the log: the streams whose names start with
	// Prefix (?prefix=, default every stream), their events, and event IDs
	// stored more than once.
	Prefix string            `json:"prefix"`
	Tally  kurrenttest.Tally `json:"tally"`
}

func (c *controller) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /restart", c.handleRestart)
	mux.HandleFunc("POST /drop", c.handleDrop)
	mux.HandleFunc("GET /status", c.handleStatus)
	return mux
}

func (c *controller) handleRestart(w http.ResponseWriter, r *http.Request) {
	down := defaultDown
	if s := r.URL.Query().Get("down"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 || d > maxDown {
			http.Error(w, fmt.Sprintf("down: want a duration from 0 to %s, got %q", maxDown, s), http.StatusBadRequest)
			return
		}
		down = d
	}
	rep, err := c.restart(down)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	writeJSON(w, rep)
}

// restart stops the node, keeps its port closed for down and starts it
// again. It does not follow the request's context: a node left stopped
// because the caller hung up would be a fault nobody asked for.
func (c *controller) restart(down time.Duration) (faultReply, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	conns := c.srv.OpenConnections()
	c.srv.Stop()
	fmt.Fprintf(c.log, "kurrenttest: restart: stopped (%d connections closed), down for %s\n", conns, down)
	c.pause(down)
	var err error
	for range startTries {
		if err = c.srv.Start(); err == nil {
			break
		}
		c.pause(startPause)
	}
	if err != nil {
		fmt.Fprintf(c.log, "kurrenttest: restart: %v\n", err)
		return faultReply{}, fmt.Errorf("restart: %w", err)
	}
	c.restarts++
	fmt.Fprintf(c.log, "kurrenttest: restart #%d: serving %s again\n", c.restarts, c.srv.URL())
	return faultReply{Fault: "restart", ConnectionsClosed: conns, DownMillis: down.Milliseconds(), Count: c.restarts}, nil
}

func (c *controller) handleDrop(w http.ResponseWriter, _ *http.Request) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.srv.DropConnections()
	c.drops++
	fmt.Fprintf(c.log, "kurrenttest: drop #%d: %d connections closed\n", c.drops, n)
	writeJSON(w, faultReply{Fault: "drop", ConnectionsClosed: n, Count: c.drops})
}

func (c *controller) handleStatus(w http.ResponseWriter, r *http.Request) {
	prefix := r.URL.Query().Get("prefix")
	c.mu.Lock()
	defer c.mu.Unlock()
	writeJSON(w, statusReply{URL: c.srv.URL(), Connections: c.srv.OpenConnections(), Restarts: c.restarts, Drops: c.drops,
		Prefix: prefix, Tally: c.srv.Tally(prefix)})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
