package rest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest/accesslog"
	"github.com/feedapi/feedapi/rest/auth"
	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/metrics"
	"github.com/feedapi/feedapi/rest/pollcache"
	"github.com/feedapi/feedapi/rest/ratelimit"
	"github.com/feedapi/feedapi/rest/sse"
)

// Config holds what the REST layer needs. Zero fields take the defaults
// noted on each.
type Config struct {
	// Graph configures the GraphQL layer behind both the /v1 endpoints and
	// /graphql. Its ETFEnabled is set from ETFEnabled, and its Version and
	// Logger default to Version and Logger. Graph.Store is required.
	Graph graph.Config
	// Auth holds the API keys and the budgets: rate limits per key, tier
	// and client IP, failed authentications and their early refusals, the
	// trusted proxies (package rest/auth). Auth.Keys is required.
	Auth auth.Config
	// ETFEnabled serves /v1/etf-flows and /v1/etf-flows/latest and lists
	// etf_assets in /v1/sources; without it the two paths answer 404.
	ETFEnabled bool
	// Version is the build version, reported by /v1/health and the OpenAPI
	// document.
	Version string
	// ServerURL and AltServerURL are the OpenAPI document's servers.
	ServerURL, AltServerURL string
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
	// revocation when Auth.Keys can tell (a Revoked method, as
	// keys.Service has).
	Live *live.Live

	// now, in tests, replaces the rate limits' clock (time.Now, or Redis's
	// TIME when shared).
	now func() time.Time
}

// New returns the HTTP handler of the whole API. It refuses to start (an
// error) when the configuration is incomplete or an embedded query does not
// validate against the executable schema.
func New(cfg Config) (http.Handler, error) {
	if cfg.Auth.Keys == nil {
		return nil, errors.New("rest: Config.Auth.Keys is required")
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
	cfg.Auth = cfg.Auth.WithDefaults()
	cfg.Graph.ETFEnabled = cfg.ETFEnabled
	if cfg.Graph.Version == "" {
		cfg.Graph.Version = cfg.Version
	}
	if cfg.Graph.Logger == nil {
		cfg.Graph.Logger = cfg.Logger
	}
	// One set of live feeds for the SSE streams and the subscriptions.
	if cfg.Live == nil {
		cfg.Live = ownLive(cfg.Auth.Keys, cfg.Logger)
	}
	cfg.Graph.Live = cfg.Live

	s := &server{
		env:            envelope.New(cfg.Logger),
		log:            cfg.Logger,
		requestTimeout: cfg.RequestTimeout,
		cors:           corsHandler(cfg.CORSOrigins),
		polls:          cfg.PollCache,
		live:           cfg.Live,
	}
	if cfg.RedisPrefix == "" {
		cfg.RedisPrefix = "feedapi:ratelimit"
	}
	rates := ratelimit.New(cfg.Redis, cfg.RedisPrefix, cfg.now, cfg.Logger, cfg.Metrics.SetRedisFallback)
	var err error
	s.guard, err = auth.New(cfg.Auth, auth.Deps{Rates: rates, Envelope: s.env, Logger: cfg.Logger, Metrics: cfg.Metrics,
		CORS: len(cfg.CORSOrigins) > 0, HeaderTooLarge: func(r *http.Request) bool { return headerBytes(r) > MaxHeaderBytes }})
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	s.observe = accesslog.Middleware(accesslog.Options{Logger: cfg.Logger, Metrics: cfg.Metrics, ClientIP: s.guard.ClientIP})
	if s.polls == nil && !cfg.DisablePollCache {
		s.polls = NewPollCache(DefaultPollCacheTTL)
	}
	if cfg.DisablePollCache {
		s.polls = nil
	}
	s.pollHint = pollInterval(s.polls.TTL())

	schema := graph.NewSchema(cfg.Graph)
	eps, err := endpoints(schema.Schema(), cfg.ETFEnabled)
	if err != nil {
		return nil, err
	}
	streamEps, err := streamEndpoints(eps, s.live)
	if err != nil {
		return nil, err
	}
	names := []string{"health"}
	for _, ep := range eps {
		names = append(names, ep.Query)
	}
	for _, ep := range streamEps {
		names = append(names, ep.Query)
	}
	queries, doc, err := newRunner(schema, cfg.Graph, names, s.recoverResolver)
	if err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	s.queries = queries
	for i := range eps {
		eps[i].toggles = fieldToggles(doc(eps[i].Query), eps[i].Params)
	}

	s.openapi, err = BuildOpenAPI(openAPIOptions(cfg))
	if err != nil {
		return nil, fmt.Errorf("rest: build OpenAPI document: %w", err)
	}
	cfg.Graph.SocketContext = s.socketContext
	cfg.Graph.WebsocketInit = s.websocketInit
	cfg.Graph.ChargeOperation = s.guard.Charge
	s.graphql = graph.NewHandler(cfg.Metrics.WithGraph(cfg.Graph))
	if s.pages, err = newPages(cfg.ETFEnabled); err != nil {
		return nil, fmt.Errorf("rest: %w", err)
	}
	return s.routes(eps, streamEps), nil
}

// ownLive returns live feeds with the defaults, whose keys are checked for
// revocation when keys can tell (a Revoked method, as keys.Service has).
func ownLive(keys auth.Authenticator, log *slog.Logger) *live.Live {
	lc := live.Config{Logger: log}
	if r, ok := keys.(interface {
		Revoked(ctx context.Context, ids []int64) ([]int64, error)
	}); ok {
		lc.Revoked = r.Revoked
	}
	return live.New(lc)
}

// openAPIOptions are the facts of the deployment the OpenAPI document states.
func openAPIOptions(cfg Config) OpenAPIOptions {
	return OpenAPIOptions{
		ServerURL:    cfg.ServerURL,
		AltServerURL: cfg.AltServerURL,
		ETFEnabled:   cfg.ETFEnabled,
		Version:      cfg.Version,
		RateLimit:    cfg.Auth.WithDefaults().RateLimit,
	}
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
