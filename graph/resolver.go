// Package graph owns feedapi's domain API: the GraphQL schema's resolvers,
// Relay connections over keyset cursors, per-request dataloaders, the typed
// domain errors and the query limits. REST and /graphql both execute here.
package graph

import (
	"context"
	"slices"

	"github.com/feedapi/feedapi/db"
)

// Resolver is the root resolver and the point where dependencies are injected.
type Resolver struct {
	store      *db.Store
	etfEnabled bool
	version    string
	limits     Limits
	ping       func(ctx context.Context) error
}

// newResolver builds the root resolver from a completed Config.
func newResolver(cfg Config) *Resolver {
	return &Resolver{
		store:      cfg.Store,
		etfEnabled: cfg.ETFEnabled,
		version:    cfg.Version,
		limits:     cfg.Limits,
		ping:       cfg.Ping,
	}
}

// sortedAssets lists the ETF assets sorted by name, as discovery shows them.
func sortedAssets() []db.Asset {
	out := slices.Clone(db.Assets)
	slices.Sort(out)
	return out
}

// databaseAnswers pings the database within Limits.PingTimeout. Health must
// answer whatever happens, so a failing or even panicking ping only means
// "unreachable".
func (r *Resolver) databaseAnswers(ctx context.Context) (ok bool) {
	ctx, cancel := context.WithTimeout(ctx, r.limits.PingTimeout)
	defer cancel()
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return r.ping(ctx) == nil
}
