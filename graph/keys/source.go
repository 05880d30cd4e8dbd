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

	mu      sync.Mutex
	down    bool      // the primary failed and has not answered since
	retryAt time.Time // when to ping it next
	probing bool
}

// read runs fn against the primary or, when a replica is configured and the
// primary is away or fails within timeout, against the replica.
func (s *source) read(ctx context.Context, fn func(context.Context, bun.IDB) error) error {
	if s.replica == nil {
		return fn(ctx, s.primary)
	}
	if !s.primaryUp() {
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

// primaryUp reports whether to ask the primary; while it is down, it starts
// a background ping when one is due.
func (s *source) primaryUp() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.down {
		return true
	}
	if !s.probing && !time.Now().Before(s.retryAt) {
		s.probing = true
		go s.probe()
	}
	return false
}

// failed marks the primary down after err.
func (s *source) failed(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.down {
		return
	}
	s.down, s.retryAt = true, time.Now().Add(s.retry)
	s.log.Warn("api keys: the primary database does not answer; verifying keys on the read replica", slog.Any("error", err))
}

// probe pings the primary and marks it up when it answers.
func (s *source) probe() {
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	err := db.Ping(ctx, s.primary)
	cancel()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.probing = false
	if err != nil {
		s.retryAt = time.Now().Add(s.retry)
		return
	}
	s.down = false
	s.log.Info("api keys: the primary database answers again; verifying keys on it")
}
