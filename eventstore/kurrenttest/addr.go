package kurrenttest

import (
	"fmt"
	"net"
	"strings"

	"github.com/google/uuid"
)

// NewServerAt starts a server listening on addr, a loopback host:port
// ("127.0.0.1:2113", "[::1]:2113", "localhost:2113"; port 0 picks a free
// one), for a process that serves the node to others at a known address, as
// cmd/kurrenttest does. Anything but a loopback address is refused: the node
// has no authentication and speaks plaintext only.
func NewServerAt(addr string, opts ...Option) (*Server, error) {
	if err := checkLoopback(addr); err != nil {
		return nil, fmt.Errorf("kurrenttest: listen on %q: %w", addr, err)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("kurrenttest: listen: %w", err)
	}
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	s := &Server{
		cfg:      cfg,
		st:       newStore(newIDCache(cfg.cacheBytes, cfg.cacheEntries), cfg.now),
		faults:   &faults{unavailable: cfg.unavailable, queue: make(map[RPC][]Fault)},
		instance: uuid.New(),
		addr:     l.Addr().String(), // the resolved address, so Start rebinds exactly it
	}
	for _, f := range cfg.faults {
		s.InjectFault(f.rpc, f.fault)
	}
	s.boot()
	s.serve(l)
	return s, nil
}

// OpenConnections reports how many client connections the running server
// holds (0 while it is stopped), so a fault can say what it cut.
func (s *Server) OpenConnections() int {
	s.mu.Lock()
	lis := s.lis
	s.mu.Unlock()
	if lis == nil {
		return 0
	}
	lis.mu.Lock()
	defer lis.mu.Unlock()
	return len(lis.conns)
}

// checkLoopback accepts a host:port whose host is a loopback IP or
// "localhost".
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q is not a loopback address", host)
}
