package rest

import (
	"context"
	"crypto/sha256"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/ratelimit"
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
//
// Failed authentications (401) count against a small budget per client IP
// (Config.AuthFailureLimit a minute); the failure that would exceed it is
// answered 429 rate_limited instead. While the budget is spent, a request
// from that IP whose key this replica has not verified recently gets 429
// before its key is looked up, so that a flood of made-up keys costs no
// database query; a key verified recently (see verifiedKeys) is still
// looked up, so that a legitimate client behind the same address keeps
// working.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		secret, ok := bearer(r.Header.Values("Authorization"))
		ip := s.clientIP(r)
		if !ok || !s.verified.has(secret) {
			if d := s.rates.Peek(r.Context(), budgetAuthFailed+ip, s.authFailures); !d.Allowed {
				s.refuseAuth(w, r, ip, d)
				return
			}
		}
		if !ok {
			s.authFailed(w, r, ip)
			return
		}
		p, err := s.keys.Authenticate(r.Context(), secret)
		if err != nil {
			if apperr.CodeOf(err) == apperr.Unauthorized {
				s.verified.forget(secret)
				s.authFailed(w, r, ip)
				return
			}
			s.writeError(w, r, err)
			return
		}
		s.verified.add(secret)
		next.ServeHTTP(w, r.WithContext(keys.WithPrincipal(r.Context(), p)))
	})
}

// authFailed counts a failed authentication against the client IP's
// budget and answers 401, or 429 when the budget is spent.
func (s *server) authFailed(w http.ResponseWriter, r *http.Request, ip string) {
	if d := s.rates.Take(r.Context(), budgetAuthFailed+ip, s.authFailures); !d.Allowed {
		s.refuseAuth(w, r, ip, d)
		return
	}
	s.writeError(w, r, apperr.New(apperr.Unauthorized, unauthorizedMessage))
}

// refuseAuth answers 429 for a client IP whose failed-authentication
// budget is spent, with that budget's rate-limit headers (policy
// "failed_auth"), and notes until when ip is spent, so that its next
// requests are refused first in the chain (refuse.go).
func (s *server) refuseAuth(w http.ResponseWriter, r *http.Request, ip string, d ratelimit.Decision) {
	now := s.rates.Clock()
	s.refuser.blocked.block(ip, now.Add(d.Reset), now)
	ratelimit.SetHeaders(w.Header(), ratelimit.PolicyAuthFailed, s.authFailures, d)
	if a := accessOf(r.Context()); a != nil {
		a.authBudget = true
	}
	s.writeError(w, r, apperr.New(apperr.RateLimited, authBudgetMessage(s.authFailures)))
}

// optionalKey puts the principal of a valid bearer key into the context and
// otherwise does nothing: on 404 and 405 a key is not required, but
// meta.tier still reports the tier of a valid one. A key is not looked up
// while the client IP's failed-authentication budget is spent, unless this
// replica verified it recently.
func (s *server) optionalKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if secret, ok := bearer(r.Header.Values("Authorization")); ok {
			if s.verified.has(secret) || s.rates.Peek(r.Context(), budgetAuthFailed+s.clientIP(r), s.authFailures).Allowed {
				if p, err := s.keys.Authenticate(r.Context(), secret); err == nil {
					s.verified.add(secret)
					r = r.WithContext(keys.WithPrincipal(r.Context(), p))
				}
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
// must be one of tiers) and the key's rate limit (429), in that order.
// Every keyed request within the limit counts against its key's budget,
// including those refused for their tier, so that every keyed response can
// carry the rate-limit headers; a request refused 429 does not count, so a
// client that keeps asking regains its budget as its earlier requests age
// out of the rolling minute. A 304 does not count (conditional.go).
func (s *server) keyed(tiers ...string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, _ := keys.FromContext(r.Context())
			tier := string(p.Tier)
			limit := s.keyLimit(tier)
			budget := budgetKey + strconv.FormatInt(p.KeyID, 10)
			if conditional(r) && slices.Contains(tiers, tier) {
				// Counted only if the answer is not a 304 (conditional.go).
				if d := s.rates.Peek(r.Context(), budget, limit); d.Allowed {
					ratelimit.SetHeaders(w.Header(), ratelimit.PolicyDefault, limit, d)
					next.ServeHTTP(&countUnlessNotModified{ResponseWriter: w, s: s, r: r, budget: budget, limit: limit}, r)
					return
				}
			}
			within := s.limit(r.Context(), w, budget, limit)
			if !slices.Contains(tiers, tier) {
				s.writeError(w, r, apperr.New(apperr.ForbiddenTier,
					"this endpoint needs a key of tier "+strings.Join(tiers, " or ")+"; this key's tier is "+tier))
				return
			}
			if !within {
				s.writeError(w, r, apperr.New(apperr.RateLimited, rateLimitedMessage(limit)))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// keyLimit is the rate limit of a key of tier, per minute.
func (s *server) keyLimit(tier string) int {
	if n, ok := s.tierRateLimits[tier]; ok {
		return n
	}
	return s.rateLimit
}

// rateLimitedMessage is the message of a key's 429.
func rateLimitedMessage(limit int) string {
	return "rate limit of " + strconv.Itoa(limit) + " requests per minute exceeded; retry after " + retryAfter + " seconds"
}

// verifiedKeysTTL is how long a key stays known after it last verified:
// long enough that a client polling every few seconds or minutes stays
// known. Knowing a key only lets it be looked up (and so revoked keys are
// still refused) while its IP's failed-authentication budget is spent.
const verifiedKeysTTL = 10 * time.Minute

// verifiedKeysSize bounds the keys remembered; when full they are
// forgotten at once (crude, but bounded, and only valid keys get in).
const verifiedKeysSize = 100000

// verifiedKeys remembers the SHA-256 of the keys this replica verified
// recently, so that a spent failed-authentication budget of their client
// IP does not lock them out.
type verifiedKeys struct {
	mu   sync.Mutex
	seen map[[sha256.Size]byte]time.Time // last verified
}

func newVerifiedKeys() *verifiedKeys {
	return &verifiedKeys{seen: map[[sha256.Size]byte]time.Time{}}
}

func (v *verifiedKeys) has(secret string) bool {
	h := sha256.Sum256([]byte(secret))
	v.mu.Lock()
	defer v.mu.Unlock()
	at, ok := v.seen[h]
	return ok && time.Since(at) < verifiedKeysTTL
}

func (v *verifiedKeys) add(secret string) {
	h := sha256.Sum256([]byte(secret))
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.seen) >= verifiedKeysSize {
		clear(v.seen)
	}
	v.seen[h] = time.Now()
}

func (v *verifiedKeys) forget(secret string) {
	h := sha256.Sum256([]byte(secret))
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.seen, h)
}
