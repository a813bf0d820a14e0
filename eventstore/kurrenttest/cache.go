package kurrenttest

import "github.com/google/uuid"

// DefaultCacheBytes is the committed-events cache budget of the real server
// (ESConsts.CommitedEventsMemCacheLimit, 8 MiB).
const DefaultCacheBytes = 8 << 20

// idCache is the server's committed-events cache: a FIFO map from event ID
// to the stream and number it was first written at. It is filled only by
// writes made since the process started and is never rebuilt, which is why
// Any/StreamExists idempotency is best-effort on the real server.
type idCache struct {
	maxBytes   int // 0: no byte budget
	maxEntries int // 0: no entry cap
	bytes      int
	entries    map[uuid.UUID]cacheEntry
	order      []uuid.UUID // insertion order; order[head:] are live
	head       int
}

type cacheEntry struct {
	stream string
	number int64
	cost   int
}

func newIDCache(maxBytes, maxEntries int) *idCache {
	return &idCache{maxBytes: maxBytes, maxEntries: maxEntries, entries: make(map[uuid.UUID]cacheEntry)}
}

// get returns where id was first written, if the cache still holds it.
func (c *idCache) get(id uuid.UUID) (cacheEntry, bool) {
	e, ok := c.entries[id]
	return e, ok
}

// put records id unless it is already there: like the server's BoundedCache,
// the first mapping wins, so an ID reused in another stream stays mapped to
// the first one (kurrent-io/KurrentDB#1173).
func (c *idCache) put(id uuid.UUID, stream string, number int64) {
	if _, ok := c.entries[id]; ok {
		return
	}
	e := cacheEntry{stream: stream, number: number, cost: entryCost(stream)}
	c.entries[id] = e
	c.order = append(c.order, id)
	c.bytes += e.cost
	for c.over() {
		c.evict()
	}
}

func (c *idCache) over() bool {
	n := len(c.order) - c.head
	return n > 0 && (c.maxEntries > 0 && n > c.maxEntries || c.maxBytes > 0 && c.bytes > c.maxBytes)
}

func (c *idCache) evict() {
	id := c.order[c.head]
	c.order[c.head] = uuid.Nil
	c.head++
	c.bytes -= c.entries[id].cost
	delete(c.entries, id)
	if c.head > len(c.order)/2 && c.head > 1024 { // compact now and then
		c.order = append([]uuid.UUID(nil), c.order[c.head:]...)
		c.head = 0
	}
}

// clear empties the cache, as a process restart does.
func (c *idCache) clear() {
	c.entries = make(map[uuid.UUID]cacheEntry)
	c.order, c.head, c.bytes = nil, 0, 0
}

// entryCost is what the server charges one entry: 28 bytes plus the .NET
// string holding the stream name, (20 + 2·len + 1) rounded up to 8.
func entryCost(stream string) int {
	s := 20 + 2*len(stream) + 1
	return 28 + (s+7)/8*8
}
