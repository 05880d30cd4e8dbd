package db

import (
	"context"
	"sync"
	"time"
)

// A since at or before the oldest firehose message bounds nothing: a client
// that asks for everything kept (since the oldest time /v1/sources gives, or
// earlier). sinceSQL's gate would count its first rows and bound its walk
// over every month, and plan that over every partition; the page is the
// first page with since checked on each row instead.
//
// Which statement answers is a choice of plan only: since stays checked on
// every row, so an oldest time that is out of date (a retention run since,
// or an import of older messages) costs at most a slower plan, never a
// wrong row. That is why it is cached for oldestHintTTL rather than read by
// every request.

// oldestHintTTL is how long the oldest firehose time is reused.
const oldestHintTTL = 10 * time.Second

// oldestHint is the cached created_at of the oldest firehose message.
type oldestHint struct {
	mu     sync.Mutex
	at     time.Time // the oldest created_at (zero: the firehose was empty)
	readAt time.Time // when at was read (zero: never)
}

// sinceFromOldest reports whether since is set and at or before the oldest
// firehose message's created_at, as last read (at most oldestHintTTL ago).
func (s *Store) sinceFromOldest(ctx context.Context, since time.Time) (bool, error) {
	if since.IsZero() {
		return false, nil
	}
	h := s.firehoseOldest
	h.mu.Lock()
	at, readAt := h.at, h.readAt
	h.mu.Unlock()
	if readAt.IsZero() || time.Since(readAt) > oldestHintTTL {
		// Read without the lock: two requests may both read it, and
		// neither waits on the other's query.
		oldest, ok, err := s.FirehoseOldest(ctx)
		if err != nil {
			return false, err
		}
		if !ok {
			oldest = time.Time{}
		}
		at = oldest
		h.mu.Lock()
		h.at, h.readAt = at, time.Now()
		h.mu.Unlock()
	}
	return !at.IsZero() && !clampTime(since).After(at), nil
}
