package ratelimit

import (
	"net/http"
	"strconv"
	"time"
)

// Names of the rate-limit headers (IETF draft "RateLimit header fields"),
// written in Go's canonical form, which net/http sends anyway, so that
// setting them does not allocate a canonical copy per request.
const (
	HeaderLimit     = "Ratelimit-Limit"
	HeaderRemaining = "Ratelimit-Remaining"
	HeaderReset     = "Ratelimit-Reset"
	HeaderPolicy    = "Ratelimit-Policy"
	HeaderRateLimit = "Ratelimit"
)

// Names of the policies in RateLimit-Policy and RateLimit.
const (
	PolicyDefault    = `"default"`     // the key's limit, or the client IP's on unauthenticated endpoints
	PolicyAuthFailed = `"failed_auth"` // the client IP's failed authentications
)

// SetHeaders sets RateLimit-Limit, -Remaining, -Reset, RateLimit-Policy
// and RateLimit of policy from d. RateLimit-Reset is the whole seconds
// (rounded up) until the oldest request counted in the window leaves it;
// with nothing remaining, that is when the next request will be allowed.
// It is computed on the store's clock (Redis's, when shared), so every
// replica gives the same answer.
func SetHeaders(h http.Header, policy string, limit int, d Decision) {
	window := int64(Window / time.Second)
	reset := min(max(int64((d.Reset+time.Second-1)/time.Second), 0), window)
	q, rem, t := strconv.Itoa(limit), strconv.Itoa(d.Remaining), strconv.FormatInt(reset, 10)
	h.Set(HeaderLimit, q)
	h.Set(HeaderRemaining, rem)
	h.Set(HeaderReset, t)
	h.Set(HeaderPolicy, policy+`;q=`+q+`;w=`+strconv.FormatInt(window, 10))
	h.Set(HeaderRateLimit, policy+`;r=`+rem+`;t=`+t)
}
