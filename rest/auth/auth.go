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
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/accesslog"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/metrics"
	"github.com/feedapi/feedapi/rest/ratelimit"
)

// Defaults of Config.
const (
	DefaultRateLimit   = 120 // requests per key per minute
	DefaultIPRateLimit = 600 // requests per client IP per minute, unauthenticated endpoints
	// DefaultAuthFailureLimit is the failed authentications per client IP
	// per minute.
	DefaultAuthFailureLimit = 30
)

// Config holds the keys and the budgets. Zero fields take the defaults
// noted on each.
type Config struct {
	// Keys verifies API keys (keys.Service). Required.
	Keys Authenticator
	// RateLimit is the default limit per key per minute (default 120).
	RateLimit int
	// TierRateLimits overrides RateLimit for keys of the named tiers
	// ("free", "pro", "internal").
	TierRateLimits map[string]int
	// IPRateLimit limits the unauthenticated endpoints (health, OpenAPI,
	// unknown paths) per client IP per minute (default 600).
	IPRateLimit int
	// AuthFailureLimit is the number of failed authentications (401) a
	// client IP may cause per rolling minute (default 30). Once it is
	// spent, that IP's requests with a key not recently verified by this
	// replica are answered 429 without looking the key up, until the
	// oldest failure is a minute old.
	AuthFailureLimit int
	// RefusalDelay holds each answer to a client IP whose failed
	// authentications are spent before it is sent (default
	// DefaultRefusalDelay, 1s; negative: none), so that a flood waiting
	// for its answers slows down. RefusalHoldMax bounds the answers held
	// at once (default DefaultRefusalHoldMax); past it they are sent at
	// once. A client that leaves frees its place.
	RefusalDelay   time.Duration
	RefusalHoldMax int
	// RefusalLogInterval: the requests of a client IP refused because its
	// failed authentications are spent are logged as one line ("requests
	// refused", with their number) per interval and IP instead of one
	// access log line each (default DefaultRefusalLogInterval, 10s).
	RefusalLogInterval time.Duration
	// TrustedProxies lists the CIDR prefixes of reverse proxies whose
	// X-Forwarded-For is believed for the client IP. Empty (the default)
	// means the client IP is the TCP peer (RemoteAddr) and
	// X-Forwarded-For is ignored, so that clients cannot choose their IP.
	TrustedProxies []string
}

// WithDefaults returns c with its zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.RateLimit <= 0 {
		c.RateLimit = DefaultRateLimit
	}
	if c.IPRateLimit <= 0 {
		c.IPRateLimit = DefaultIPRateLimit
	}
	if c.AuthFailureLimit <= 0 {
		c.AuthFailureLimit = DefaultAuthFailureLimit
	}
	if c.RefusalDelay == 0 {
		c.RefusalDelay = DefaultRefusalDelay
	}
	if c.RefusalHoldMax <= 0 {
		c.RefusalHoldMax = DefaultRefusalHoldMax
	}
	if c.RefusalLogInterval <= 0 {
		c.RefusalLogInterval = DefaultRefusalLogInterval
	}
	return c
}

// Deps are what the REST layer lends the guard.
type Deps struct {
	// Rates holds the budgets. Required.
	Rates *ratelimit.Store
	// Envelope writes the refusals. Required.
	Envelope *envelope.Writer
	// Logger receives the summed-up early refusals (default: discard).
	Logger *slog.Logger
	// Metrics records the early refusals, which skip the access log.
	Metrics *metrics.Metrics
	// CORS: browser origins are allowed, so every answer varies by Origin.
	CORS bool
	// HeaderTooLarge reports a request the full path refuses 431, which
	// the early refusal leaves to it.
	HeaderTooLarge func(*http.Request) bool
}

// Guard applies Config to requests.
type Guard struct {
	keys           Authenticator
	rateLimit      int
	tierRateLimits map[string]int
	ipRateLimit    int
	authFailures   int
	rates          *ratelimit.Store
	verified       *verifiedKeys
	refuser        *refuser
	clientIP       func(*http.Request) string
	env            *envelope.Writer
}

// New returns the guard of cfg, or an error for a configuration that
// cannot work.
func New(cfg Config, d Deps) (*Guard, error) {
	if cfg.Keys == nil {
		return nil, errors.New("Config.Keys is required")
	}
	for tier, n := range cfg.TierRateLimits {
		if n <= 0 {
			return nil, fmt.Errorf("rate limit of tier %q must be positive, is %d", tier, n)
		}
	}
	clientIP, err := clientIPFunc(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	cfg = cfg.WithDefaults()
	g := &Guard{
		keys:           observedKeys{cfg.Keys},
		rateLimit:      cfg.RateLimit,
		tierRateLimits: cfg.TierRateLimits,
		ipRateLimit:    cfg.IPRateLimit,
		authFailures:   cfg.AuthFailureLimit,
		rates:          d.Rates,
		verified:       newVerifiedKeys(),
		clientIP:       clientIP,
		env:            d.Envelope,
	}
	g.refuser = newRefuser(g.authFailures, d.Rates.Clock, cfg.RefusalDelay, cfg.RefusalHoldMax,
		newRefusalLog(d.Logger, cfg.RefusalLogInterval), d.CORS, d.Metrics, d.HeaderTooLarge)
	return g, nil
}

// ClientIP returns the client IP of r: its TCP peer, or with trusted
// proxies the first untrusted address of X-Forwarded-For.
func (g *Guard) ClientIP(r *http.Request) string { return g.clientIP(r) }

// RateState names the state of the rate store (rest/ratelimit's State):
// shared through Redis, or counting locally.
func (g *Guard) RateState() string { return g.rates.State() }

// Authenticator verifies API keys. Authenticate returns an *apperr.Error
// with Code Unauthorized for a missing, invalid or revoked key; any other
// error is internal. keys.Service implements it.
type Authenticator interface {
	Authenticate(ctx context.Context, secret string) (keys.Principal, error)
}

// unauthorizedMessage is the message of every 401.
const unauthorizedMessage = "API key is missing, invalid or revoked"

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

// observedKeys notes the key of every successful authentication in the
// request's access log record, so that the access log reports the key's id
// and tier (never the key) whichever route looked it up.
type observedKeys struct {
	Authenticator
}

// Authenticate implements Authenticator.
func (k observedKeys) Authenticate(ctx context.Context, secret string) (keys.Principal, error) {
	p, err := k.Authenticator.Authenticate(ctx, secret)
	if err == nil {
		accesslog.Of(ctx).NoteKey(p.KeyID, string(p.Tier))
	}
	return p, err
}
