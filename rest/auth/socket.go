package auth

import (
	"context"
	"strconv"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
)

// Socket checks the key of a websocket connection whose upgrade request
// had no Authorization header: the connection_init payload's
// "Authorization" ("Bearer fapi_…") or "key", with the checks of a
// request's key: the budget of failed authentications of ip, the client
// IP of the upgrade, and the tier (internal). The caller then charges the
// connection against the key's rate limit (Charge).
func (g *Guard) Socket(ctx context.Context, payload map[string]any, ip string) (keys.Principal, error) {
	var secret string
	if v, ok := payload["Authorization"].(string); ok {
		secret, _ = bearer([]string{v})
	} else if v, ok := payload["authorization"].(string); ok {
		secret, _ = bearer([]string{v})
	} else if v, ok := payload["key"].(string); ok {
		secret = v
	}
	if secret == "" || !g.verified.has(secret) {
		if d := g.rates.Peek(ctx, budgetAuthFailed+ip, g.authFailures); !d.Allowed {
			return keys.Principal{}, apperr.New(apperr.RateLimited, authBudgetMessage(g.authFailures))
		}
	}
	if secret == "" {
		g.rates.Take(ctx, budgetAuthFailed+ip, g.authFailures)
		return keys.Principal{}, apperr.New(apperr.Unauthorized, `connection_init needs the key: {"Authorization": "Bearer fapi_…"}`)
	}
	p, err := g.keys.Authenticate(ctx, secret)
	if err != nil {
		if apperr.CodeOf(err) == apperr.Unauthorized {
			g.verified.forget(secret)
			g.rates.Take(ctx, budgetAuthFailed+ip, g.authFailures)
			return keys.Principal{}, apperr.New(apperr.Unauthorized, unauthorizedMessage)
		}
		return keys.Principal{}, err
	}
	g.verified.add(secret)
	if p.Tier != "internal" {
		return keys.Principal{}, apperr.New(apperr.ForbiddenTier, "/graphql needs a key of tier internal; this key's tier is "+string(p.Tier))
	}
	return p, nil
}

// Charge counts one request against the budget of the key in ctx: a
// websocket's connection, and each operation sent on it, which no HTTP
// request carries.
func (g *Guard) Charge(ctx context.Context) error {
	p, ok := keys.FromContext(ctx)
	if !ok {
		return keys.ErrUnauthorized
	}
	limit := g.keyLimit(string(p.Tier))
	if d := g.rates.Take(ctx, budgetKey+strconv.FormatInt(p.KeyID, 10), limit); !d.Allowed {
		return apperr.New(apperr.RateLimited, rateLimitedMessage(limit))
	}
	return nil
}
