package live

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/feedapi/feedapi/graph/apperr"
)

// keyFeeds is the per-key accounting of the live feeds: the open-feed slots
// of each key, and the feeds and connections to end when a key is revoked.
type keyFeeds struct {
	cfg Config

	mu       sync.Mutex
	open     map[int64]int
	watches  map[int64]map[*watch]struct{}
	checking bool // a check loop runs
}

// watch is one feed or connection of a key, ended when the key is revoked.
type watch struct {
	end func(End)
}

func newKeyFeeds(cfg Config) *keyFeeds {
	return &keyFeeds{cfg: cfg, open: map[int64]int{}, watches: map[int64]map[*watch]struct{}{}}
}

func (k *keyFeeds) acquire(keyID int64, tier string) (func(), error) {
	limit := k.cfg.Limits[tier]
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.open[keyID] >= limit {
		return nil, apperr.New(apperr.RateLimited, fmt.Sprintf(
			"this key has %d open streams and subscriptions together, the limit of its tier %s; close one first",
			limit, tier))
	}
	k.open[keyID]++
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			if k.open[keyID]--; k.open[keyID] <= 0 {
				delete(k.open, keyID)
			}
		})
	}, nil
}

// opened is the number of open feeds of keyID.
func (k *keyFeeds) opened(keyID int64) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.open[keyID]
}

func (k *keyFeeds) watch(keyID int64, end func(End)) func() {
	w := &watch{end: end}
	k.mu.Lock()
	ws := k.watches[keyID]
	if ws == nil {
		ws = map[*watch]struct{}{}
		k.watches[keyID] = ws
	}
	ws[w] = struct{}{}
	start := k.cfg.Revoked != nil && !k.checking
	if start {
		k.checking = true
	}
	k.mu.Unlock()
	if start {
		go k.check()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			k.mu.Lock()
			defer k.mu.Unlock()
			delete(k.watches[keyID], w)
			if len(k.watches[keyID]) == 0 {
				delete(k.watches, keyID)
			}
		})
	}
}

// check asks every RevocationCheck which keys with open feeds are revoked,
// and ends their feeds; it ends when no key is watched.
func (k *keyFeeds) check() {
	t := time.NewTicker(k.cfg.RevocationCheck)
	defer t.Stop()
	failing := false
	for range t.C {
		k.mu.Lock()
		if len(k.watches) == 0 {
			k.checking = false
			k.mu.Unlock()
			return
		}
		ids := slices.Sorted(maps.Keys(k.watches))
		k.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), k.cfg.RevocationCheck)
		revoked, err := k.cfg.Revoked(ctx, ids)
		cancel()
		if err != nil {
			// Feeds go on while keys cannot be checked, as requests with a
			// cached verification do; one line per outage.
			if !failing {
				k.cfg.Logger.Warn("live: the keys of open feeds could not be checked; retrying",
					slog.Any("error", err))
			}
			failing = true
			continue
		}
		if failing {
			k.cfg.Logger.Info("live: the keys of open feeds are checked again")
			failing = false
		}
		var ends []*watch
		k.mu.Lock()
		for _, id := range revoked {
			for w := range k.watches[id] {
				ends = append(ends, w)
			}
		}
		k.mu.Unlock()
		for _, w := range ends {
			w.end(EndRevoked)
		}
	}
}
