package kurrenttest

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/protos/gossip"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/serverfeatures"
	"github.com/EventStore/EventStore-Client-Go/v4/protos/streams"
	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
)

// maxRecvMsgSize lets events up to the client's own 17 MiB limit reach the
// append size check, which then answers with the server's error instead of
// gRPC's ResourceExhausted.
const maxRecvMsgSize = 17 << 20

// Server is an in-memory KurrentDB node speaking the gRPC protocol of the
// official clients on 127.0.0.1. Its data survives Stop/Start, as a real
// node's database does, so tests can take it away and bring it back at the
// same URL.
type Server struct {
	cfg      config
	st       *store
	faults   *faults
	addr     string    // host:port, the same for the server's whole life
	instance uuid.UUID // the node's id in gossip

	life   sync.Mutex // serialises Start, Stop and Close
	closed bool

	mu     sync.Mutex // guards the running gRPC server below
	gs     *grpc.Server
	lis    *trackingListener
	served chan struct{} // closed when Serve has returned
}

// streamsService implements the Streams service on the store.
type streamsService struct {
	streams.UnimplementedStreamsServer
	st        *store
	maxAppend int
}

// NewServer starts a server on 127.0.0.1 at a free port.
func NewServer(opts ...Option) (*Server, error) {
	return NewServerAt("127.0.0.1:0", opts...)
}

// URL is the connection string for esdb.ParseConnectionString.
func (s *Server) URL() string { return "esdb://" + s.addr + "?tls=false" }

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.addr }

// Stop takes the node away: the listener closes, so new connections are
// refused, and every call in flight and every subscription ends with
// codes.Unavailable on the client. Stop returns once every handler has
// returned. Data is kept for Start. Stopping a stopped server does nothing.
func (s *Server) Stop() {
	s.life.Lock()
	defer s.life.Unlock()
	s.stop()
}

// Start brings a stopped node back at the same address, as after a process
// restart: the data is intact, but the committed-events cache is empty, so
// Any/StreamExists retries of earlier writes are no longer recognised, and
// a new $epoch-information event is written (unless WithoutSystemEvents).
// Starting a running server does nothing.
func (s *Server) Start() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return errors.New("kurrenttest: start: server is closed")
	}
	s.mu.Lock()
	running := s.gs != nil
	s.mu.Unlock()
	if running {
		return nil
	}
	l, err := net.Listen("tcp", s.addr)
	if err != nil {
		return fmt.Errorf("kurrenttest: start: listen on %s: %w", s.addr, err)
	}
	s.st.mu.Lock()
	s.st.cache.clear()
	s.st.mu.Unlock()
	s.boot()
	s.serve(l)
	return nil
}

// Restart is Stop then Start: a node restart that keeps the data and
// empties the committed-events cache.
func (s *Server) Restart() error {
	s.Stop()
	return s.Start()
}

// ClearIdempotencyCache empties the committed-events cache without taking
// the node down, as eviction of old entries does on a busy server.
func (s *Server) ClearIdempotencyCache() {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.cache.clear()
}

// Close stops the server for good; after it returns no goroutine of the
// server is left. Close is idempotent.
func (s *Server) Close() {
	s.life.Lock()
	defer s.life.Unlock()
	s.closed = true
	s.stop()
}

// stop shuts the running gRPC server down. Call with life held.
func (s *Server) stop() {
	s.mu.Lock()
	gs, served := s.gs, s.served
	s.gs, s.lis, s.served = nil, nil, nil
	s.mu.Unlock()
	if gs == nil {
		return
	}
	gs.Stop() // closes the listener and connections, cancels and waits for handlers
	<-served
}

// boot writes what a node writes when it starts. Call with life held.
func (s *Server) boot() {
	if s.cfg.systemEvents {
		s.st.writeEpoch(s.instance)
	}
}

// serve runs a new gRPC server on l. Call with life held.
func (s *Server) serve(l net.Listener) {
	tl := newTrackingListener(l)
	gs := grpc.NewServer(
		// The client pings every 10 s even with no call open; grpc-go's
		// default policy (5 min) would answer with GOAWAY too_many_pings and
		// kill idle subscriptions after about 30 s.
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: time.Second, PermitWithoutStream: true}),
		grpc.MaxRecvMsgSize(maxRecvMsgSize),
		grpc.WaitForHandlers(true),
		grpc.ChainUnaryInterceptor(s.unaryFaults),
		grpc.ChainStreamInterceptor(s.streamFaults),
	)
	streams.RegisterStreamsServer(gs, &streamsService{st: s.st, maxAppend: s.cfg.maxAppend})
	serverfeatures.RegisterServerFeaturesServer(gs, featuresService{})
	host, port := splitAddr(s.addr)
	gossip.RegisterGossipServer(gs, &gossipService{instance: s.instance, host: host, port: port, now: s.cfg.now})
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = gs.Serve(tl) // returns when Stop closes the listener
	}()
	s.mu.Lock()
	s.gs, s.lis, s.served = gs, tl, served
	s.mu.Unlock()
}

func splitAddr(addr string) (string, uint32) {
	host, p, _ := net.SplitHostPort(addr)
	var port uint32
	_, _ = fmt.Sscan(p, &port)
	return host, port
}
