package live

import (
	"sync"
	"time"
)

// sharedReads shares reads between the members of a feed that ask the
// same: a member that needs the database as of generation gen of the Hub
// (every change it was woken by) takes the result of a read under the same
// key that started at generation gen or later (and not before notBefore),
// or starts one. However many members follow one key, each change costs
// one read: within a group (one read per distinct position and round) and
// between a group and the first reads of the feeds that join it. The zero
// value is not usable; use newSharedReads.
type sharedReads[T any] struct {
	now func() time.Time

	mu        sync.Mutex
	m         map[string]*sharedRead[T]
	lastSweep time.Time
}

type sharedRead[T any] struct {
	gen      uint64
	start    time.Time
	finished time.Time // zero while the read runs; guarded by sharedReads.mu
	done     chan struct{}
	res      T
	err      error
}

const (
	// maxSharedReads bounds the finished reads kept for sharing.
	maxSharedReads = 4096
	// sharedReadTTL is how long a finished read is kept. Members woken by
	// the same change ask for it within milliseconds, and one woken by a
	// timer only takes a read started after it set the timer, so an older
	// read is never shared again: dropping it frees the pages of positions
	// every member has left.
	sharedReadTTL = 10 * time.Second
)

func newSharedReads[T any](now func() time.Time) *sharedReads[T] {
	return &sharedReads[T]{now: now, m: map[string]*sharedRead[T]{}}
}

// do returns the result of a read under key that started at generation gen
// or later (current, Hub.Generation, tells the generation when a read
// starts) and not before notBefore, running read when there is none. A
// member woken by the signal passes the zero time; one woken by a timer (a
// retry while rows are pending, a safety read whatever the signal says)
// passes the time of its last read, so that it gets a read that started
// since, not the result it had. A failed read is not shared with members
// that come after it ends.
func (s *sharedReads[T]) do(key string, gen uint64, notBefore time.Time, current func() uint64, read func() (T, error)) (T, error) {
	s.mu.Lock()
	if r, ok := s.m[key]; ok && r.gen >= gen && !r.start.Before(notBefore) {
		s.mu.Unlock()
		<-r.done
		return r.res, r.err
	}
	now := s.now()
	s.sweep(now)
	r := &sharedRead[T]{gen: current(), start: now, done: make(chan struct{})}
	s.m[key] = r
	s.mu.Unlock()
	r.res, r.err = read()
	close(r.done)
	s.mu.Lock()
	r.finished = s.now()
	if r.err != nil && s.m[key] == r {
		delete(s.m, key)
	}
	s.mu.Unlock()
	return r.res, r.err
}

// sweep drops finished reads older than sharedReadTTL, at most once a
// second, and every finished read when the map is full. s.mu is held.
func (s *sharedReads[T]) sweep(now time.Time) {
	full := len(s.m) >= maxSharedReads
	if !full && now.Sub(s.lastSweep) < time.Second {
		return
	}
	s.lastSweep = now
	for k, r := range s.m {
		if !r.finished.IsZero() && (full || now.Sub(r.finished) >= sharedReadTTL) {
			delete(s.m, k)
		}
	}
}

// kept is the number of reads kept, running or finished.
func (s *sharedReads[T]) kept() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
