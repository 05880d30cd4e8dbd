package graph

import (
	"sync"
	"time"
)

// SharedReads shares reads of the database between the consumers of the
// change signal that ask the same (SSE streams, GraphQL subscriptions): a
// consumer that needs the database as of generation gen of the Hub (every
// change it was woken by) takes the result of a read under the same key
// that started at generation gen or later (and not before notBefore), or
// starts one. However many
// consumers follow one key, each change costs one read. The zero value is
// not usable; use NewSharedReads.
type SharedReads[T any] struct {
	mu sync.Mutex
	m  map[string]*sharedRead[T]
}

type sharedRead[T any] struct {
	gen   uint64
	start time.Time
	done  chan struct{}
	res   T
	err   error
}

// maxSharedReads bounds the finished reads kept for sharing.
const maxSharedReads = 4096

// NewSharedReads returns an empty set of shared reads.
func NewSharedReads[T any]() *SharedReads[T] {
	return &SharedReads[T]{m: map[string]*sharedRead[T]{}}
}

// Do returns the result of a read under key that started at generation gen
// or later (current, Hub.Generation, tells the generation when a read
// starts) and not before notBefore, running read when there is none. A
// consumer woken by the signal passes the zero time; one woken by a timer
// (a retry while rows are pending, a heartbeat's read whatever the signal
// says) passes the time it set the timer, so that it gets a read that
// started since, not the result it had. A failed read is not shared with
// consumers that come after it ends.
func (s *SharedReads[T]) Do(key string, gen uint64, notBefore time.Time, current func() uint64, read func() (T, error)) (T, error) {
	s.mu.Lock()
	if r, ok := s.m[key]; ok && r.gen >= gen && !r.start.Before(notBefore) {
		s.mu.Unlock()
		<-r.done
		return r.res, r.err
	}
	if len(s.m) >= maxSharedReads {
		for k, r := range s.m {
			select {
			case <-r.done:
				delete(s.m, k)
			default:
			}
		}
	}
	r := &sharedRead[T]{gen: current(), start: time.Now(), done: make(chan struct{})}
	s.m[key] = r
	s.mu.Unlock()
	r.res, r.err = read()
	close(r.done)
	if r.err != nil {
		s.mu.Lock()
		if s.m[key] == r {
			delete(s.m, key)
		}
		s.mu.Unlock()
	}
	return r.res, r.err
}
