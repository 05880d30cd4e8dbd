package keys

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
)

// source reads keys from the primary and, when the primary does not answer,
// from the read replica. After a failure of the primary every read goes to
// the replica, and the primary is pinged in the background every retry
// until it answers, so that no request waits on a primary known to be away.
type source struct {
	primary, replica bun.IDB // replica may be nil
	timeout          time.Duration
	retry            time.Duration
	log              *slog.Logger
	back             func() // called when the primary answers again
	stop             chan struct{}

	mu     sync.Mutex
	down   bool // the primary failed and has not answered since
	closed bool
}

// read runs fn against the primary or, when a replica is configured and the
// primary is away or fails within timeout, against the replica.
func (s *source) read(ctx context.Context, fn func(context.Context, bun.IDB) error) error {
	if s.replica == nil {
		return fn(ctx, s.primary)
	}
	if s.primaryDown() {
		return fn(ctx, s.replica)
	}
	pctx, cancel := context.WithTimeout(ctx, s.timeout)
	err := fn(pctx, s.primary)
	cancel()
	if err == nil || errors.Is(err, db.ErrNotFound) || ctx.Err() != nil {
		return err // the caller's own deadline or cancellation is no fault of the primary
	}
	s.failed(err)
	return fn(ctx, s.replica)
}

func (s *source) primaryDown() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.down
}

// failed marks the primary down after err and starts pinging it.
func (s *source) failed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down || s.closed {
		return
	}
	s.down = true
	s.log.Warn("api keys: the primary database does not answer; verifying keys on the read replica", slog.Any("error", err))
	go s.probe()
}

// probe pings the primary every retry until it answers, then marks it up.
func (s *source) probe() {
	t := time.NewTicker(s.retry)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
		err := db.Ping(ctx, s.primary)
		cancel()
		if err == nil {
			break
		}
	}
	s.mu.Lock()
	s.down = false
	s.mu.Unlock()
	s.log.Info("api keys: the primary database answers again; verifying keys on it")
	s.back()
}

// close stops the pings of an absent primary.
func (s *source) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.stop)
	}
}
