package rest

import (
	"net/http"

	"github.com/go-chi/cors"

	"github.com/feedapi/feedapi/rest/ratelimit"
)

// corsMaxAge is how long, in seconds, a browser may reuse a preflight's answer.
const corsMaxAge = 600

// corsExposedHeaders are the response headers a script on another origin
// may read: pacing, caching and support.
var corsExposedHeaders = []string{
	ratelimit.HeaderLimit, ratelimit.HeaderRemaining, ratelimit.HeaderReset, ratelimit.HeaderPolicy, ratelimit.HeaderRateLimit,
	"Retry-After", "Etag", "X-Request-Id",
}

// corsHandler lets browser apps on the given origins call the API: it
// answers preflights itself (before any key check or rate limit, so a
// preflight needs no key and costs no budget) and adds the
// Access-Control-* headers to the answers of allowed origins. No origins
// (the default): no CORS headers at all, browsers allow same-origin only.
func corsHandler(origins []string) func(http.Handler) http.Handler {
	if len(origins) == 0 {
		return func(next http.Handler) http.Handler { return next }
	}
	return cors.Handler(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodHead, http.MethodPost},
		AllowedHeaders: []string{"Authorization", "Content-Type", "If-None-Match", "Accept"},
		ExposedHeaders: corsExposedHeaders,
		MaxAge:         corsMaxAge,
	})
}
