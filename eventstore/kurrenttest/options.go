package kurrenttest

import "time"

// DefaultMaxAppendSize is the real server's default cap on one append, in
// the server's own measure: data + metadata + 2 bytes per event-type
// character, summed over the batch (MaxAppendSize, 1 MiB).
const DefaultMaxAppendSize = 1 << 20

// Option configures a Server.
type Option func(*config)

type config struct {
	cacheBytes   int
	cacheEntries int
	maxAppend    int
	unavailable  bool
	faults       []queuedFault
	now          func() time.Time
	systemEvents bool
}

type queuedFault struct {
	rpc   RPC
	fault Fault
}

func defaultConfig() config {
	return config{
		cacheBytes:   DefaultCacheBytes,
		maxAppend:    DefaultMaxAppendSize,
		now:          time.Now,
		systemEvents: true,
	}
}

// WithCacheBytes sets the committed-events cache budget, charged per entry
// as the server does (28 bytes plus the stream name as a .NET string).
// The default is DefaultCacheBytes; n <= 0 removes the byte budget.
func WithCacheBytes(n int) Option {
	return func(c *config) { c.cacheBytes = max(n, 0) }
}

// WithCacheEntries caps the committed-events cache at n entries, evicting
// the oldest first, so tests can reach eviction with a few events. It
// applies on top of the byte budget; n <= 0 means no entry cap (the default).
func WithCacheEntries(n int) Option {
	return func(c *config) { c.cacheEntries = max(n, 0) }
}

// WithMaxAppendSize sets the append size cap (DefaultMaxAppendSize).
func WithMaxAppendSize(n int) Option {
	return func(c *config) { c.maxAppend = n }
}

// WithUnavailable starts the server refusing Streams calls with
// codes.Unavailable, as a node that is not ready does; see SetUnavailable.
func WithUnavailable() Option {
	return func(c *config) { c.unavailable = true }
}

// WithFault queues a one-shot fault for the next call of rpc; see InjectFault.
// Repeat the option to queue several.
func WithFault(rpc RPC, f Fault) Option {
	return func(c *config) { c.faults = append(c.faults, queuedFault{rpc, f}) }
}

// WithClock sets the server clock, used for the "created" timestamp of
// events and for $maxAge, so tests can age events without sleeping.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.now = now }
}

// WithoutSystemEvents starts with an empty log. By default the log starts,
// like a real node's, with a system event ($epoch-information, written again
// on every Start), so $all readers meet a "$" stream they must tolerate.
func WithoutSystemEvents() Option {
	return func(c *config) { c.systemEvents = false }
}
