// Package auth guards the REST layer's routes: API-key authentication
// (keys.Service behind Authenticator) and the tier policy, the per-key and
// per-client-IP rate limits (on rest/ratelimit's store), the budget of
// failed authentications per client IP with its early, held refusals
// (refuse.go), the rule that a 304 costs no budget (conditional.go), and
// the client IP itself (trusted proxies). The same checks guard a
// websocket's connection_init (Socket) and its operations (Charge). It
// writes its refusals through rest/envelope and notes the key in the
// access log's record.
package auth

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/accesslog"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/metrics"
	"github.com/feedapi/feedapi/rest/ratelimit"
)

// Authenticate verifies the request's bearer key and puts its principal into
// the context, where the graph layer and meta.tier find it.
//
// Failed authentications (401) count against a small budget per client IP
// (Config.AuthFailureLimit a minute); the failure that would exceed it is
// answered 429 rate_limited instead. While the budget is spent, a request
// from that IP whose key this replica has not verified recently gets 429
// before its key is looked up, so that a flood of made-up keys costs no
// database query; a key verified recently (see verifiedKeys) is still
// looked up, so that a legitimate client behind the same address keeps
// working.
func (g *Guard) Authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, ok := bearer(r.Header.Values("Authorization"))
		ip := g.clientIP(r)
		if !ok || !g.verified.has(secret) {
			if d := g.rates.Peek(r.Context(), budgetAuthFailed+ip, g.authFailures); !d.Allowed {
				g.refuseAuth(w, r, ip, d)
				return
			}
		}
		if !ok {
			g.authFailed(w, r, ip)
			return
		}
		p, err := g.keys.Authenticate(r.Context(), secret)
		if err != nil {
			if apperr.CodeOf(err) == apperr.Unauthorized {
				g.verified.forget(secret)
				g.authFailed(w, r, ip)
				return
			}
			g.env.Error(w, r, err)
			return
		}
		g.verified.add(secret)
		next.ServeHTTP(w, r.WithContext(keys.WithPrincipal(r.Context(), p)))
	})
}

// authFailed counts a failed authentication against the client IP's
// budget and answers 401, or 429 when the budget is spent.
func (g *Guard) authFailed(w http.ResponseWriter, r *http.Request, ip string) {
	if d := g.rates.Take(r.Context(), budgetAuthFailed+ip, g.authFailures); !d.Allowed {
		g.refuseAuth(w, r, ip, d)
		return
	}
	g.env.Error(w, r, apperr.New(apperr.Unauthorized, unauthorizedMessage))
}

// refuseAuth answers 429 for a client IP whose failed-authentication
// budget is spent, with that budget's rate-limit headers (policy
// "failed_auth"), and notes until when ip is spent, so that its next
// requests are refused first in the chain (refuse.go).
func (g *Guard) refuseAuth(w http.ResponseWriter, r *http.Request, ip string, d ratelimit.Decision) {
	now := g.rates.Clock()
	g.refuser.blocked.block(ip, now.Add(d.Reset), now)
	ratelimit.SetHeaders(w.Header(), ratelimit.PolicyAuthFailed, g.authFailures, d)
	accesslog.Of(r.Context()).NoteAuthBudget()
	g.env.Error(w, r, apperr.New(apperr.RateLimited, authBudgetMessage(g.authFailures)))
}

// OptionalKey puts the principal of a valid bearer key into the context and
// otherwise does nothing: on 404 and 405 a key is not required, but
// meta.tier still reports the tier of a valid one. A key is not looked up
// while the client IP's failed-authentication budget is spent, unless this
// replica verified it recently.
func (g *Guard) OptionalKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if secret, ok := bearer(r.Header.Values("Authorization")); ok {
			if g.verified.has(secret) || g.rates.Peek(r.Context(), budgetAuthFailed+g.clientIP(r), g.authFailures).Allowed {
				if p, err := g.keys.Authenticate(r.Context(), secret); err == nil {
					g.verified.add(secret)
					r = r.WithContext(keys.WithPrincipal(r.Context(), p))
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Keyed applies, after Authenticate, the tier policy (403: the key's tier
// must be one of tiers) and the key's rate limit (429), in that order.
// Every keyed request within the limit counts against its key's budget,
// including those refused for their tier, so that every keyed response can
// carry the rate-limit headers; a request refused 429 does not count, so a
// client that keeps asking regains its budget as its earlier requests age
// out of the rolling minute. A 304 does not count (conditional.go).
func (g *Guard) Keyed(tiers ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := keys.FromContext(r.Context())
			tier := string(p.Tier)
			limit := g.keyLimit(tier)
			budget := budgetKey + strconv.FormatInt(p.KeyID, 10)
			if conditional(r) && slices.Contains(tiers, tier) {
				// Counted only if the answer is not a 304 (conditional.go).
				if d := g.rates.Peek(r.Context(), budget, limit); d.Allowed {
					ratelimit.SetHeaders(w.Header(), ratelimit.PolicyDefault, limit, d)
					next.ServeHTTP(&countUnlessNotModified{ResponseWriter: w, g: g, r: r, budget: budget, limit: limit}, r)
					return
				}
			}
			within := g.limit(r.Context(), w, budget, limit)
			if !slices.Contains(tiers, tier) {
				g.env.Error(w, r, apperr.New(apperr.ForbiddenTier,
					"this endpoint needs a key of tier "+strings.Join(tiers, " or ")+"; this key's tier is "+tier))
				return
			}
			if !within {
				g.env.Error(w, r, apperr.New(apperr.RateLimited, rateLimitedMessage(limit)))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// Refusals returns the whole API's handler: mux, its router, behind the
// early refusal. keyed holds the patterns Authenticate guards.
func (g *Guard) Refusals(mux *chi.Mux, keyed map[string]bool) http.Handler {
	return &earlyRefusal{g: g, mux: mux, keyed: keyed}
}

// earlyRefusal is the handler of Refusals.
type earlyRefusal struct {
	g     *Guard
	mux   *chi.Mux
	keyed map[string]bool
}

func (e *earlyRefusal) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g, f := e.g, e.g.refuser
	if f.blocked.empty() {
		e.mux.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	ip := g.clientIP(r)
	reset, spent := f.blocked.remaining(ip, f.clock())
	if !spent {
		e.mux.ServeHTTP(w, r)
		return
	}
	// What the full path would answer differently: CORS headers for a
	// browser, 431 for a header too large, the GraphQL routes' own pages
	// and transports, a key that works.
	route := ""
	if r.URL.Path != "/graphql" && len(r.Header["Origin"]) == 0 && !f.tooLarge(r) {
		route = f.match(e.mux, r)
	}
	if !e.keyed[route] {
		e.mux.ServeHTTP(w, r)
		return
	}
	if secret, ok := bearer(r.Header.Values("Authorization")); ok && g.verified.has(secret) {
		e.mux.ServeHTTP(w, r)
		return
	}
	id := envelope.NewRequestID(start)
	f.hold(r.Context())
	f.write(w, r, id, reset)
	f.log.add(ip, id)
	f.metrics.ObserveRequest(r.Method, route, http.StatusTooManyRequests, time.Since(start), metrics.ScopeAuth)
}
