// Package graph owns feedapi's domain API: the GraphQL schema's resolvers,
// Relay connections over keyset cursors, per-request dataloaders, the typed
// domain errors and the query limits. REST and /graphql both execute here.
package graph

import (
	"context"
	"log/slog"
	"slices"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/live"
)

// Resolver is the root resolver and the point where dependencies are injected.
type Resolver struct {
	store       *db.Store
	etfEnabled  bool
	version     string
	limits      Limits
	ping        func(ctx context.Context) error
	pingPrimary func(ctx context.Context) error // nil without a read replica
	logger      *slog.Logger
	// The live feeds of the subscriptions; nil live: no subscriptions.
	live         *live.Live
	postFeed     *live.Feed[[]*db.Post]
	firehoseFeed *live.Feed[[]*db.FirehoseMessage]
}

// newResolver builds the root resolver from a completed Config.
func newResolver(cfg Config) *Resolver {
	r := &Resolver{
		store:       cfg.Store,
		etfEnabled:  cfg.ETFEnabled,
		version:     cfg.Version,
		limits:      cfg.Limits,
		ping:        cfg.Ping,
		pingPrimary: cfg.PingPrimary,
		logger:      cfg.Logger,
		live:        cfg.Live,
	}
	if r.live != nil {
		r.postFeed = live.NewFeed[[]*db.Post](r.live, live.KindPosts, "postAdded")
		r.firehoseFeed = live.NewFeed[[]*db.FirehoseMessage](r.live, live.KindFirehose, "firehoseMessageAdded")
	}
	return r
}

// sortedAssets lists the ETF assets sorted by name, as discovery shows them.
func sortedAssets() []db.Asset {
	out := slices.Clone(db.Assets)
	slices.Sort(out)
	return out
}

// databasesAnswer pings, at once and each within Limits.PingTimeout, the
// database the queries read from and, when it is a replica, the primary
// (without one, the primary is the database read from). Health must answer
// whatever happens, so a failing or even panicking ping only means
// "unreachable".
func (r *Resolver) databasesAnswer(ctx context.Context) (reads, primary bool) {
	if r.pingPrimary == nil {
		reads = r.answers(ctx, r.ping)
		return reads, reads
	}
	done := make(chan bool, 1)
	go func() { done <- r.answers(ctx, r.pingPrimary) }()
	reads = r.answers(ctx, r.ping)
	return reads, <-done
}

func (r *Resolver) answers(ctx context.Context, ping func(context.Context) error) (ok bool) {
	ctx, cancel := context.WithTimeout(ctx, r.limits.PingTimeout)
	defer cancel()
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return ping(ctx) == nil
}

// reachability is health's word for whether a database answers.
func reachability(ok bool) string {
	if ok {
		return "ok"
	}
	return "unreachable"
}
