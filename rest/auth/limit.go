package auth

import (
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/ratelimit"
)

// Prefixes of the budgets' names in the rate store.
const (
	budgetKey        = "key:"      // per API key id
	budgetIP         = "ip:"       // per client IP, unauthenticated endpoints
	budgetAuthFailed = "authfail:" // failed authentications per client IP
)

// limit counts the request against the budget name of limit requests per
// rolling minute, sets the rate-limit headers of the default policy (see
// ratelimit.SetHeaders) and reports whether the request is within the limit.
func (g *Guard) limit(ctx context.Context, w http.ResponseWriter, name string, limit int) bool {
	d := g.rates.Take(ctx, name, limit)
	ratelimit.SetHeaders(w.Header(), ratelimit.PolicyDefault, limit, d)
	return d.Allowed
}

// IPLimited applies the per-client-IP limit of the unauthenticated routes.
func (g *Guard) IPLimited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.limit(r.Context(), w, budgetIP+g.clientIP(r), g.ipRateLimit) {
			g.env.Error(w, r, apperr.New(apperr.RateLimited, fmt.Sprintf(
				"rate limit of %d requests per minute per client address exceeded; retry after %s seconds",
				g.ipRateLimit, envelope.RetryAfter)))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// keyLimit is the rate limit of a key of tier, per minute.
func (g *Guard) keyLimit(tier string) int {
	if n, ok := g.tierRateLimits[tier]; ok {
		return n
	}
	return g.rateLimit
}

// rateLimitedMessage is the message of a key's 429.
func rateLimitedMessage(limit int) string {
	return "rate limit of " + strconv.Itoa(limit) + " requests per minute exceeded; retry after " + envelope.RetryAfter + " seconds"
}
