package auth

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

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
	// the early refusal leaves to it (nil: none).
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
	if d.Rates == nil || d.Envelope == nil {
		return nil, errors.New("Deps.Rates and Deps.Envelope are required")
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
	if d.HeaderTooLarge == nil {
		d.HeaderTooLarge = func(*http.Request) bool { return false }
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
