package rest

import (
	"context"
	"net/http"
	"strconv"
	"time"
)

// Names of the rate-limit headers (IETF draft "RateLimit header fields"),
// written in Go's canonical form, which net/http sends anyway, so that
// setting them does not allocate a canonical copy per request.
const (
	hLimit     = "Ratelimit-Limit"
	hRemaining = "Ratelimit-Remaining"
	hReset     = "Ratelimit-Reset"
	hPolicy    = "Ratelimit-Policy"
	hRateLimit = "Ratelimit"
)

// Prefixes of the budgets' names in the rate store.
const (
	budgetKey        = "key:"      // per API key id
	budgetIP         = "ip:"       // per client IP, unauthenticated endpoints
	budgetAuthFailed = "authfail:" // failed authentications per client IP
)

// Names of the policies in RateLimit-Policy and RateLimit.
const (
	policyDefault    = `"default"`     // the key's limit, or the client IP's on unauthenticated endpoints
	policyAuthFailed = `"failed_auth"` // the client IP's failed authentications
)

// limit counts the request against the budget name of limit requests per
// rolling minute, sets the rate-limit headers of the default policy (see
// setRateHeaders) and reports whether the request is within the limit.
func (s *server) limit(ctx context.Context, w http.ResponseWriter, name string, limit int) bool {
	d := s.rates.take(ctx, name, limit)
	setRateHeaders(w.Header(), policyDefault, limit, d)
	return d.allowed
}

// setRateHeaders sets RateLimit-Limit, -Remaining, -Reset, RateLimit-Policy
// and RateLimit of policy from d. RateLimit-Reset is the whole seconds
// (rounded up) until the oldest request counted in the window leaves it;
// with nothing remaining, that is when the next request will be allowed.
// It is computed on the store's clock (Redis's, when shared), so every
// replica gives the same answer.
func setRateHeaders(h http.Header, policy string, limit int, d decision) {
	window := int64(rateWindow / time.Second)
	reset := min(max(int64((d.reset+time.Second-1)/time.Second), 0), window)
	q, rem, t := strconv.Itoa(limit), strconv.Itoa(d.remaining), strconv.FormatInt(reset, 10)
	h.Set(hLimit, q)
	h.Set(hRemaining, rem)
	h.Set(hReset, t)
	h.Set(hPolicy, policy+`;q=`+q+`;w=`+strconv.FormatInt(window, 10))
	h.Set(hRateLimit, policy+`;r=`+rem+`;t=`+t)
}
