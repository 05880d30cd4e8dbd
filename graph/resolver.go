// Package graph owns feedapi's domain API: the GraphQL schema's resolvers,
// Relay connections over keyset cursors, per-request dataloaders, the typed
// domain errors and the query limits. REST and /graphql both execute here.
package graph

import (
	"context"
	"log/slog"
	"slices"

	"github.com/feedapi/feedapi/db"
)

// Resolver is the root resolver and the point where dependencies are injected.
type Resolver struct {
	store       *db.Store
	etfEnabled  bool
	version     string
	limits      Limits
	ping        func(ctx context.Context) error
	pingPrimary func(ctx context.Context) error // nil without a read replica
	hub         *Hub                            // nil: no subscriptions
	logger      *slog.Logger
	// The reads of the subscriptions, shared by those that follow the
	// same filters from the same position.
	postReads     *SharedReads[subscriptionPage[db.Post]]
	firehoseReads *SharedReads[subscriptionPage[db.FirehoseMessage]]
}

// newResolver builds the root resolver from a completed Config.
func newResolver(cfg Config) *Resolver {
	return &Resolver{
		store:       cfg.Store,
		etfEnabled:  cfg.ETFEnabled,
		version:     cfg.Version,
		limits:      cfg.Limits,
		ping:        cfg.Ping,
		pingPrimary: cfg.PingPrimary,
		hub:         cfg.Hub,
		logger:      cfg.Logger,

		postReads:     NewSharedReads[subscriptionPage[db.Post]](),
		firehoseReads: NewSharedReads[subscriptionPage[db.FirehoseMessage]](),
	}
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
