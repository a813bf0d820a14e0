package kurrenttest

import (
	"net"
	"sync"
)

// trackingListener remembers the connections it accepted, by remote
// address (what gRPC reports as the peer), so faults can close them.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[string]net.Conn
}

func newTrackingListener(l net.Listener) *trackingListener {
	return &trackingListener{Listener: l, conns: make(map[string]net.Conn)}
}

// Accept implements net.Listener.
func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: c, l: l}
	l.mu.Lock()
	l.conns[c.RemoteAddr().String()] = tc
	l.mu.Unlock()
	return tc, nil
}

// drop closes the connection from addr, if it is still open.
func (l *trackingListener) drop(addr string) {
	l.mu.Lock()
	c := l.conns[addr]
	l.mu.Unlock()
	if c != nil {
		_ = c.Close()
	}
}

// dropAll closes every open connection and reports how many there were.
func (l *trackingListener) dropAll() int {
	l.mu.Lock()
	conns := make([]net.Conn, 0, len(l.conns))
	for _, c := range l.conns {
		conns = append(conns, c)
	}
	l.mu.Unlock()
	for _, c := range conns {
		_ = c.Close()
	}
	return len(conns)
}

// trackedConn forgets itself when closed, by whichever side.
type trackedConn struct {
	net.Conn
	l    *trackingListener
	once sync.Once
}

// Close implements net.Conn.
func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c.RemoteAddr().String())
		c.l.mu.Unlock()
	})
	return c.Conn.Close()
}
