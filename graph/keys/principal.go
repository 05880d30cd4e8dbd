// Package keys issues, verifies and revokes API keys. Keys are random secrets
// with a recognisable prefix; only their SHA-256 hash is stored.
package keys

import (
	"context"

	"github.com/feedapi/feedapi/db"
)

// Principal is the verified holder of a key, carried in the request context.
type Principal struct {
	KeyID int64
	Tier  db.Tier
	Name  string
}

type principalKey struct{}

// WithPrincipal returns a context carrying p.
func WithPrincipal(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the principal of the request, if a key was verified.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
