package keys

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
)

// maxHoles bounds the ids the issued set waits for (see issued.holes).
const maxHoles = 1024

// issued is the set of the hashes of every key ever issued, revoked ones
// included, held in memory so that a secret nobody issued is refused without
// a query. Revocation is not its business: a known hash is still verified
// against the database (Service.Authenticate).
//
// The set learns new keys in rounds, each one query for the ids above those
// it has seen. A hash it does not hold waits for the next round that starts
// after it was presented, so a new key works at its first request; rounds
// start at most once per interval, so made-up keys cost at most one small
// query per interval however many arrive.
type issued struct {
	read     func(ctx context.Context, fn func(context.Context, bun.IDB) error) error
	interval time.Duration // least time between the starts of two rounds
	timeout  time.Duration // longest a round may take
	now      func() time.Time

	mu     sync.Mutex
	hashes map[[sha256.Size]byte]struct{}
	maxID  int64
	// holes are ids below maxID not seen yet, with when they were noticed:
	// a key whose insert committed after a later one's (ids come from a
	// sequence in insert order, commits do not), or an id that a failed
	// insert burnt. Rounds ask from the lowest hole until holeTTL has
	// passed, then give it up as burnt.
	holes   map[int64]time.Time
	holeTTL time.Duration
	pending *round // the next round, not started yet, which new misses join
	last    *round // the round started last
}

// round is one refresh of the set; done closes when it has finished.
type round struct {
	start time.Time
	done  chan struct{}
	err   error
}

func newIssued(read func(context.Context, func(context.Context, bun.IDB) error) error, interval, timeout, holeTTL time.Duration, now func() time.Time) *issued {
	return &issued{read: read, interval: interval, timeout: timeout, holeTTL: holeTTL, now: now,
		hashes: make(map[[sha256.Size]byte]struct{}), holes: make(map[int64]time.Time)}
}

// add records a key this process has just issued.
func (s *issued) add(hash [sha256.Size]byte) {
	s.mu.Lock()
	s.hashes[hash] = struct{}{}
	s.mu.Unlock()
}

// contains reports whether hash belongs to an issued key. A hash not in the
// set waits for the next round; the round's failure is returned as an error
// (the set cannot tell then whether the key is new).
func (s *issued) contains(ctx context.Context, hash [sha256.Size]byte) (bool, error) {
	s.mu.Lock()
	if _, ok := s.hashes[hash]; ok {
		s.mu.Unlock()
		return true, nil
	}
	r := s.pending
	if r == nil {
		r = &round{done: make(chan struct{})}
		s.pending = r
		go s.run(r, s.last)
	}
	s.mu.Unlock()

	select {
	case <-r.done:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	if r.err != nil {
		return false, r.err
	}
	s.mu.Lock()
	_, ok := s.hashes[hash]
	s.mu.Unlock()
	return ok, nil
}

// run performs round r once the previous round prev has finished and the
// interval since prev's start has passed.
func (s *issued) run(r, prev *round) {
	if prev != nil {
		<-prev.done
		if wait := s.interval - time.Since(prev.start); wait > 0 {
			time.Sleep(wait)
		}
	}
	s.mu.Lock()
	s.pending, s.last = nil, r
	r.start = time.Now()
	from := s.maxID
	for id := range s.holes {
		from = min(from, id-1)
	}
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	var rows []db.APIKeyHash
	err := s.read(ctx, func(ctx context.Context, idb bun.IDB) (err error) {
		rows, err = db.APIKeyHashesAfter(ctx, idb, from)
		return err
	})
	if err != nil {
		r.err = fmt.Errorf("refresh the issued keys: %w", err)
	} else {
		s.apply(rows)
	}
	close(r.done)
}

// apply adds rows, in id order, to the set and keeps the holes up to date.
func (s *issued) apply(rows []db.APIKeyHash) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for _, k := range rows {
		var h [sha256.Size]byte
		copy(h[:], k.KeyHash)
		s.hashes[h] = struct{}{}
		delete(s.holes, k.ID)
		if k.ID <= s.maxID {
			continue
		}
		// Ids skipped on the way up are holes, unless too many to wait for
		// (a sequence moved far ahead): those are given up at once.
		if s.maxID > 0 && k.ID-s.maxID-1 <= maxHoles-int64(len(s.holes)) {
			for id := s.maxID + 1; id < k.ID; id++ {
				s.holes[id] = now
			}
		}
		s.maxID = k.ID
	}
	for id, seen := range s.holes {
		if now.Sub(seen) >= s.holeTTL {
			delete(s.holes, id)
		}
	}
}
