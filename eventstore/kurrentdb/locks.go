package kurrentdb

import (
	"context"
	"sync"
)

// streamLocks serialises this process's appends per stream. The server
// cannot tell us whether an append it accepted was our write or an
// idempotent replay of an identical concurrent one, so two goroutines racing
// the same redelivery would both report "appended". Serialised, the second
// reads the first one's event and reports Duplicate. It also spares racing
// appenders the WrongExpectedVersion round trips. Across processes the
// expected-revision check still keeps the stream exact.
type streamLocks struct {
	mu   sync.Mutex
	held map[string]*streamLock
}

type streamLock struct {
	token chan struct{} // holds one value while the lock is taken
	refs  int           // holders and waiters; the entry goes at zero
}

func newStreamLocks() *streamLocks {
	return &streamLocks{held: make(map[string]*streamLock)}
}

// lock takes stream's lock, waiting no longer than ctx allows, and returns
// the function that releases it.
func (l *streamLocks) lock(ctx context.Context, stream string) (unlock func(), err error) {
	l.mu.Lock()
	sl := l.held[stream]
	if sl == nil {
		sl = &streamLock{token: make(chan struct{}, 1)}
		l.held[stream] = sl
	}
	sl.refs++
	l.mu.Unlock()

	select {
	case sl.token <- struct{}{}:
		return func() {
			<-sl.token
			l.unref(stream, sl)
		}, nil
	case <-ctx.Done():
		l.unref(stream, sl)
		return nil, ctx.Err()
	}
}

func (l *streamLocks) unref(stream string, sl *streamLock) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if sl.refs--; sl.refs == 0 {
		delete(l.held, stream)
	}
}
