package rest

import (
	"context"
	"net/http"

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
func (s *server) limit(ctx context.Context, w http.ResponseWriter, name string, limit int) bool {
	d := s.rates.Take(ctx, name, limit)
	ratelimit.SetHeaders(w.Header(), ratelimit.PolicyDefault, limit, d)
	return d.Allowed
}
