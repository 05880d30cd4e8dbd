package rest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/metrics"
	"github.com/feedapi/feedapi/rest/pollcache"
	"github.com/feedapi/feedapi/rest/ratelimit"
	"github.com/feedapi/feedapi/rest/sse"
)

// Defaults of Config.
const (
	DefaultRateLimit   = 120 // requests per key per minute
	DefaultIPRateLimit = 600 // requests per client IP per minute, unauthenticated endpoints
	// DefaultAuthFailureLimit is the failed authentications per client IP
	// per minute.
	DefaultAuthFailureLimit = 30
)

// Config holds what the REST layer needs. Zero fields take the defaults
// noted on each.
type Config struct {
	// Graph configures the GraphQL layer behind both the /v1 endpoints and
	// /graphql. Its ETFEnabled is set from ETFEnabled, and its Version and
	// Logger default to Version and Logger. Graph.Store is required.
	Graph graph.Config
	// Keys verifies API keys (keys.Service). Required.
	Keys Authenticator
	// ETFEnabled serves /v1/etf-flows and /v1/etf-flows/latest and lists
	// etf_assets in /v1/sources; without it the two paths answer 404.
	ETFEnabled bool
	// Version is the build version, reported by /v1/health and the OpenAPI
	// document.
	Version string
	// ServerURL and AltServerURL are the OpenAPI document's servers.
	ServerURL, AltServerURL string
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
	// Redis, when set, holds the rate-limit counters, so that all replicas
	// share one budget per key (and per client IP). While it is unreachable
	// each replica falls back to local counters, and adds what it counted
	// meanwhile to Redis once it answers again. Give the client bounded
	// timeouts and no retries (feedapi serve: Dial/Read/WriteTimeout 1s,
	// MaxRetries -1), so that the fallback engages within a second, but not
	// so short that a busy replica takes a slow answer for an outage and
	// counts on its own.
	Redis *redis.Client
	// RedisPrefix starts the names of the counters in Redis (default
	// "feedapi:ratelimit"); deployments sharing one Redis need their own.
	RedisPrefix string
	// Logger receives errors, with the request id, and one access log line
	// per request at info level (default: discard).
	Logger *slog.Logger
	// Metrics, when set, records the Prometheus metrics of requests, rate
	// limits and GraphQL operations (NewMetrics). Serve their registry on
	// an address of its own, never on the API's.
	Metrics *Metrics
	// CORSOrigins are the browser origins (https://app.example.com, or *)
	// whose scripts may call the API; empty (the default) allows none.
	CORSOrigins []string
	// RequestTimeout bounds the context of every request (0: no bound).
	// Without it a request stuck on an unreachable database (a dial that
	// hangs until its connect timeout, or a place in the pool's queue behind
	// such dials, which database/sql makes one at a time) waits as long as
	// the outage lasts; past it the answer is 500 internal.
	RequestTimeout time.Duration
	// PollCache answers the first pages of /v1/posts and /v1/firehose
	// (NewPollCache); wire a change signal to its Invalidate. Nil: one
	// with DefaultPollCacheTTL. To turn caching off, set
	// DisablePollCache.
	PollCache *PollCache
	// DisablePollCache serves every first page from the database.
	DisablePollCache bool
	// Live is the process's live feeds (graph/live): the SSE endpoints
	// /v1/posts/stream and /v1/firehose/stream and the GraphQL
	// subscriptions are its sinks, and share its limits. Nil: live feeds
	// of their own with the defaults, whose keys are checked for
	// revocation when Keys can tell (a Revoked method, as keys.Service
	// has).
	Live *live.Live

	// now, in tests, replaces the rate limits' clock (time.Now, or Redis's
	// TIME when shared).
	now func() time.Time
}

// server is the REST layer built by New.
type server struct {
	keys      Authenticator
	queries   *runner
	graphql   http.Handler
	graphiql  *staticPage
	dashboard *staticPage
	landing   *landing
	reference *staticPage
	openapi   []byte
	endpoints []endpoint
	streamEps []streamEndpoint
	live      *live.Live
	// drains counts the stream writes the kernel did not take at once
	// (package rest/sse).
	drains         atomic.Int64
	rateLimit      int
	tierRateLimits map[string]int
	ipRateLimit    int
	authFailures   int
	rates          *ratelimit.Store
	verified       *verifiedKeys
	refuser        *refuser
	clientIP       func(*http.Request) string
	log            *slog.Logger
	metrics        *Metrics
	requestTimeout time.Duration
	cors           func(http.Handler) http.Handler
	bufs           bufferPool
	gzips          gzipPool
	polls          *PollCache
	pollHint       []string // X-Poll-Interval
}

// New returns the HTTP handler of the whole API. It refuses to start (an
// error) when the configuration is incomplete or an embedded query does not
// validate against the executable schema.
func New(cfg Config) (http.Handler, error) {
	if cfg.Keys == nil {
		return nil, errors.New("rest: Config.Keys is required")
	}
	if cfg.Graph.Store == nil {
		return nil, errors.New("rest: Config.Graph.Store is required")
	}
	if n := cfg.Graph.Limits.MaxPageBytes; n != 0 && n < graph.MinPageBytes {
		return nil, fmt.Errorf("rest: the page limit of %d bytes is below the least, %d", n, graph.MinPageBytes)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.RateLimit <= 0 {
		cfg.RateLimit = DefaultRateLimit
	}
	if cfg.IPRateLimit <= 0 {
		cfg.IPRateLimit = DefaultIPRateLimit
	}
	if cfg.AuthFailureLimit <= 0 {
		cfg.AuthFailureLimit = DefaultAuthFailureLimit
	}
	for tier, n := range cfg.TierRateLimits {
		if n <= 0 {
			return nil, fmt.Errorf("rest: rate limit of tier %q must be positive, is %d", tier, n)
		}
	}
	cfg.Graph.ETFEnabled = cfg.ETFEnabled
	if cfg.Graph.Version == "" {
		cfg.Graph.Version = cfg.Version
	}
	if cfg.Graph.Logger == nil {
		cfg.Graph.Logger = cfg.Logger
	}
	// One set of live feeds for the SSE streams and the subscriptions.
	if cfg.Live == nil {
		lc := live.Config{Logger: cfg.Logger}
		if r, ok := cfg.Keys.(interface {
			Revoked(ctx context.Context, ids []int64) ([]int64, error)
		}); ok {
			lc.Revoked = r.Revoked
		}
		cfg.Live = live.New(lc)
	}
	cfg.Graph.Live = cfg.Live
	clientIP, err := clientIPFunc(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}

	s := &server{
		keys:           observedKeys{cfg.Keys},
		rateLimit:      cfg.RateLimit,
		tierRateLimits: cfg.TierRateLimits,
		ipRateLimit:    cfg.IPRateLimit,
		authFailures:   cfg.AuthFailureLimit,
		verified:       newVerifiedKeys(),
		clientIP:       clientIP,
		log:            cfg.Logger,
		metrics:        cfg.Metrics,
		requestTimeout: cfg.RequestTimeout,
		cors:           corsHandler(cfg.CORSOrigins),
		polls:          cfg.PollCache,
		live:           cfg.Live,
	}
	if s.polls == nil && !cfg.DisablePollCache {
		s.polls = NewPollCache(DefaultPollCacheTTL)
	}
	if cfg.DisablePollCache {
		s.polls = nil
	}
	s.pollHint = pollInterval(s.polls.TTL())

	schema := graph.NewSchema(cfg.Graph)
	s.endpoints, err = endpoints(schema.Schema(), cfg.ETFEnabled)
	if err != nil {
		return nil, err
	}
	if s.streamEps, err = streamEndpoints(s.endpoints, s.live); err != nil {
		return nil, err
	}
	names := []string{"health"}
	for _, ep := range s.endpoints {
		names = append(names, ep.Query)
	}
	for _, ep := range s.streamEps {
		names = append(names, ep.Query)
	}
	sources, err := readQueries()
	if err != nil {
		return nil, err
	}
	docs, err := prepare(schema.Schema(), sources, names)
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	for i := range s.endpoints {
		s.endpoints[i].toggles = fieldToggles(docs[sources[s.endpoints[i].Query]], s.endpoints[i].Params)
	}
	exec := executor.New(schema)
	graph.ConfigureExecutor(exec, cfg.Graph)
	// Overrides of graph's choices for the fixed queries: only the prepared
	// documents; errors keep their cause, so that a domain error reaches
	// the envelope as it is and anything else is logged once, by
	// writeError, with the request id.
	exec.SetQueryCache(docs)
	exec.SetErrorPresenter(graphql.DefaultErrorPresenter)
	exec.SetRecoverFunc(s.recoverResolver)
	s.queries = &runner{exec: exec, sources: sources}

	s.openapi, err = BuildOpenAPI(openAPIOptions(cfg))
	if err != nil {
		return nil, fmt.Errorf("rest: build OpenAPI document: %w", err)
	}
	cfg.Graph.SocketContext = s.socketContext
	cfg.Graph.WebsocketInit = s.websocketInit
	cfg.Graph.ChargeOperation = s.chargeOperation
	s.graphql = graph.NewHandler(cfg.Metrics.WithGraph(cfg.Graph))
	if s.graphiql, err = newGraphiQL(); err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	if s.dashboard, err = newDashboard(cfg.ETFEnabled); err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	if s.landing, err = newLanding(); err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	if s.reference, err = newReference(); err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}

	if cfg.RedisPrefix == "" {
		cfg.RedisPrefix = "feedapi:ratelimit"
	}
	s.rates = ratelimit.New(cfg.Redis, cfg.RedisPrefix, cfg.now, cfg.Logger, cfg.Metrics.SetRedisFallback)
	if cfg.RefusalDelay == 0 {
		cfg.RefusalDelay = DefaultRefusalDelay
	}
	if cfg.RefusalHoldMax <= 0 {
		cfg.RefusalHoldMax = DefaultRefusalHoldMax
	}
	if cfg.RefusalLogInterval <= 0 {
		cfg.RefusalLogInterval = DefaultRefusalLogInterval
	}
	s.refuser = newRefuser(s.authFailures, s.rates.Clock, cfg.RefusalDelay, cfg.RefusalHoldMax,
		newRefusalLog(cfg.Logger, cfg.RefusalLogInterval), len(cfg.CORSOrigins) > 0)
	return s.routes(), nil
}

// openAPIOptions are the facts of the deployment the OpenAPI document states.
func openAPIOptions(cfg Config) OpenAPIOptions {
	return OpenAPIOptions{
		ServerURL:    cfg.ServerURL,
		AltServerURL: cfg.AltServerURL,
		ETFEnabled:   cfg.ETFEnabled,
		Version:      cfg.Version,
		RateLimit:    cfg.RateLimit,
	}
}

// clientIPFunc returns how the client IP of a request is found: its TCP
// peer, or with trusted proxies the first untrusted address of
// X-Forwarded-For read from the right.
func clientIPFunc(trusted []string) (func(*http.Request) string, error) {
	prefixes := make([]netip.Prefix, 0, len(trusted))
	for _, t := range trusted {
		p, err := netip.ParsePrefix(t)
		if err != nil {
			return nil, fmt.Errorf("rest: trusted proxy %q: %w", t, err)
		}
		prefixes = append(prefixes, p.Masked())
	}
	return func(r *http.Request) string {
		peer, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil {
			return r.RemoteAddr
		}
		ip := peer.Addr().Unmap()
		if len(prefixes) == 0 {
			return ip.String()
		}
		return forwardedClient(ip, r.Header.Values("X-Forwarded-For"), prefixes).String()
	}, nil
}

// forwardedClient walks the X-Forwarded-For chain from the peer leftwards
// while the hops are trusted proxies, and returns the first untrusted one.
// An unparsable hop ends the walk at the last trusted address seen.
func forwardedClient(peer netip.Addr, xff []string, trusted []netip.Prefix) netip.Addr {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	client := peer
	var hops []string
	for _, h := range xff {
		for hop := range strings.SplitSeq(h, ",") {
			hops = append(hops, strings.TrimSpace(hop))
		}
	}
	for i := len(hops) - 1; i >= 0 && isTrusted(client); i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			break
		}
		client = a.Unmap()
	}
	return client
}

// NewServer returns an http.Server for h with timeouts suited to a JSON API.
// deadPeer, when positive, is how long data the server sent may stay
// unacknowledged before the kernel ends the connection (live.Config's
// DeadPeer): a client whose network vanished frees its streams then. Run it
// with ListenAndServe; on SIGTERM call Shutdown with a deadline (say 20s),
// which stops accepting connections and waits for requests in flight, and
// the live feeds' Shutdown, which ends the streams:
//
//	srv := rest.NewServer(addr, h, lv.Config().DeadPeer())
//	go func() { <-ctx.Done(); sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second); defer cancel(); srv.Shutdown(sctx) }()
//	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) { … }
//
// net/http answers some malformed requests itself, before any handler runs,
// in text/plain and with no hook to change that: a bad request line, an
// invalid header, a missing or repeated Host (400), an unknown
// Transfer-Encoding (501), an HTTP version other than 1.x (505), an Expect
// other than 100-continue (417, no body), and a header larger than
// serverHeaderBytes (431). Below that size the handler refuses a header
// over MaxHeaderBytes with a 431 in the JSON envelope. OPTIONS * goes to the
// handler too (404 in the envelope) instead of net/http's empty 200.
func NewServer(addr string, h http.Handler, deadPeer time.Duration) *http.Server {
	return &http.Server{
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			sse.SetDeadPeerTimeout(c, deadPeer)
			return ctx
		},
		Addr:                         addr,
		Handler:                      h,
		ReadHeaderTimeout:            5 * time.Second,
		ReadTimeout:                  15 * time.Second,
		WriteTimeout:                 30 * time.Second,
		IdleTimeout:                  120 * time.Second,
		MaxHeaderBytes:               serverHeaderBytes,
		DisableGeneralOptionsHandler: true,
	}
}

// MaxHeaderBytes is the largest request line and header fields a request
// may have; a larger one is refused with 431 in the error envelope.
const MaxHeaderBytes = 16 << 10

// serverHeaderBytes is where net/http itself stops reading a header (431 in
// text/plain): larger than MaxHeaderBytes, so that the handler answers the
// requests between the two in the envelope.
const serverHeaderBytes = 64 << 10

// Metrics are the Prometheus metrics of the REST layer (package
// rest/metrics).
type Metrics = metrics.Metrics

// NewMetrics creates the metrics of the REST layer and registers them with
// reg (metrics.New).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) { return metrics.New(reg) }

// PollCache holds the first pages of /v1/posts and /v1/firehose (package
// rest/pollcache); a nil one caches nothing.
type PollCache = pollcache.Cache

// NewPollCache returns a cache whose entries live at most ttl; ttl <= 0
// returns nil, which caches nothing.
func NewPollCache(ttl time.Duration) *PollCache { return pollcache.New(ttl) }

// DefaultPollCacheTTL is how long a first page stays in the PollCache when
// nothing invalidates it sooner.
const DefaultPollCacheTTL = pollcache.DefaultTTL

// Kinds of the PollCache's entries, the names Invalidate takes.
const (
	PollPosts    = contract.PollPosts
	PollFirehose = contract.PollFirehose
)
