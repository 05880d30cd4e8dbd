package rest

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
)

// Authenticator verifies API keys. Authenticate returns an *apperr.Error
// with Code Unauthorized for a missing, invalid or revoked key; any other
// error is internal. keys.Service implements it.
type Authenticator interface {
	Authenticate(ctx context.Context, secret string) (keys.Principal, error)
}

// unauthorizedMessage is the message of every 401.
const unauthorizedMessage = "API key is missing, invalid or revoked"

// authenticate verifies the request's bearer key and puts its principal into
// the context, where the graph layer and meta.tier find it.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, ok := bearer(r.Header.Values("Authorization"))
		if !ok {
			s.writeError(w, r, apperr.New(apperr.Unauthorized, unauthorizedMessage))
			return
		}
		p, err := s.keys.Authenticate(r.Context(), secret)
		if err != nil {
			if apperr.CodeOf(err) == apperr.Unauthorized {
				err = apperr.New(apperr.Unauthorized, unauthorizedMessage)
			}
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(keys.WithPrincipal(r.Context(), p)))
	})
}

// optionalKey puts the principal of a valid bearer key into the context and
// otherwise does nothing: on 404 and 405 a key is not required, but
// meta.tier still reports the tier of a valid one.
func (s *server) optionalKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if secret, ok := bearer(r.Header.Values("Authorization")); ok {
			if p, err := s.keys.Authenticate(r.Context(), secret); err == nil {
				r = r.WithContext(keys.WithPrincipal(r.Context(), p))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// bearer returns the credentials of a single `Authorization: Bearer <key>`
// header; the scheme name is case-insensitive.
func bearer(headers []string) (string, bool) {
	if len(headers) != 1 {
		return "", false
	}
	scheme, secret, ok := strings.Cut(headers[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	secret = strings.Trim(secret, " \t")
	if secret == "" || strings.ContainsAny(secret, " \t") {
		return "", false
	}
	return secret, true
}

// keyed applies, after authenticate, the tier policy (403: the key's tier
// must be one of tiers) and the key's rate limit (429), in that order. Every keyed request counts against its
// key's budget, including those refused for their tier, so that every keyed
// response can carry the rate-limit headers.
func (s *server) keyed(tiers ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := keys.FromContext(r.Context())
			tier := string(p.Tier)
			limit := s.rateLimit
			if n, ok := s.tierRateLimits[tier]; ok {
				limit = n
			}
			within := s.keyLimiter.allow(w, r, "key:"+strconv.FormatInt(p.KeyID, 10), limit)
			if !slices.Contains(tiers, tier) {
				s.writeError(w, r, apperr.New(apperr.ForbiddenTier,
					"this endpoint needs a key of tier "+strings.Join(tiers, " or ")+"; this key's tier is "+tier))
				return
			}
			if !within {
				s.writeError(w, r, apperr.New(apperr.RateLimited,
					"rate limit of "+strconv.Itoa(limit)+" requests per minute exceeded; retry after "+retryAfter+" seconds"))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
