package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/seed"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest"
	"github.com/feedapi/feedapi/rest/auth"
)

// serveFlags configure the HTTP service; demo and serve share them.
type serveFlags struct {
	retentionFlag
	Addr          string         `env:"FEEDAPI_ADDR" default:":8080" help:"Address to listen on."`
	PublicURL     string         `name:"public-url" env:"FEEDAPI_PUBLIC_URL" help:"The service address, listed as the first server in the OpenAPI document (default: the address listened on, e.g. http://localhost:8080)."`
	AltURL        string         `name:"alt-url" env:"FEEDAPI_ALT_URL" help:"A second address that reaches the same API, listed as the second server (default without --public-url: the listen address by IP, e.g. http://127.0.0.1:8080)."`
	ETFEnabled    bool           `name:"etf-enabled" env:"FEEDAPI_ETF_ENABLED" default:"true" negatable:"" help:"Offer the ETF flow endpoints (--no-etf-enabled or FEEDAPI_ETF_ENABLED=false to turn them off)."`
	RateLimit     int            `name:"rate-limit" env:"FEEDAPI_RATE_LIMIT" default:"120" help:"Requests per key per rolling minute."`
	TierLimits    map[string]int `name:"tier-rate-limit" env:"FEEDAPI_TIER_RATE_LIMITS" help:"Per-tier overrides of --rate-limit, e.g. pro=600;internal=6000."`
	IPRateLimit   int            `name:"ip-rate-limit" env:"FEEDAPI_IP_RATE_LIMIT" default:"600" help:"Requests per client IP per minute on the unauthenticated endpoints."`
	AuthFailures  int            `name:"auth-failure-limit" env:"FEEDAPI_AUTH_FAILURE_LIMIT" default:"30" help:"Failed authentications (401) per client IP per rolling minute; beyond it that IP's requests with an unverified key get 429 without a key lookup."`
	RefusalDelay  time.Duration  `name:"auth-refusal-delay" env:"FEEDAPI_AUTH_REFUSAL_DELAY" default:"1s" help:"How long a 429 to a client IP whose failed authentications are spent is held before it is sent (0: not held); at most 64 are held at once."`
	RedisURL      string         `name:"redis-url" env:"REDIS_URL" help:"Redis URL (redis://host:6379/0); when set, replicas share one rate-limit budget per key."`
	RedisPrefix   string         `name:"redis-prefix" env:"FEEDAPI_REDIS_PREFIX" default:"feedapi:ratelimit" help:"Start of the names of the rate-limit counters in Redis; deployments sharing one Redis need their own."`
	DBMaxConns    int            `name:"db-max-conns" env:"FEEDAPI_DB_MAX_CONNS" default:"0" help:"Maximum open database connections (0: four per CPU core)."`
	DBStatementTO time.Duration  `name:"db-statement-timeout" env:"FEEDAPI_DB_STATEMENT_TIMEOUT" default:"5s" help:"Server-side limit on each SQL statement."`
	RequestTO     time.Duration  `name:"request-timeout" env:"FEEDAPI_REQUEST_TIMEOUT" default:"1500ms" help:"Longest a request may wait on the database (connecting, queueing for a connection, querying); past it the answer is 500 internal, so that clients hear of a database outage within 2 seconds (0: no limit)."`
	GQLMaxResp    int            `name:"graphql-max-response-bytes" env:"FEEDAPI_GRAPHQL_MAX_RESPONSE_BYTES" default:"4194304" help:"Largest /graphql response in bytes; a larger one is replaced by a bad_request error naming this limit (0: the default)."`
	MaxPageBytes  int            `name:"max-page-bytes" env:"FEEDAPI_MAX_PAGE_BYTES" default:"4194304" help:"Most bytes of long texts (body, raw, summary_ai, content) one /v1 answer holds, at least 1048576: a page ends early, with has_more and a cursor, before it would pass it; an item alone over it is a 400 naming the parameter to turn off (0: the default)."`
	ShutdownGrace time.Duration  `name:"shutdown-grace" env:"FEEDAPI_SHUTDOWN_GRACE" default:"20s" help:"On SIGTERM, how long in-flight requests may take to finish."`
	AdminAddr     string         `name:"admin-addr" env:"FEEDAPI_ADMIN_ADDR" help:"Address of the admin listener, which serves /metrics (Prometheus) and /debug/pprof/, e.g. 127.0.0.1:9090; never expose it publicly. Empty: no admin listener."`
	ReplicaURL    string         `name:"database-replica-url" env:"DATABASE_REPLICA_URL" help:"PostgreSQL URL of a read replica; when set the API's queries read from it, API keys from --database-url or, while that does not answer, from the replica; health pings both."`
	CORSOrigins   []string       `name:"cors-origin" env:"FEEDAPI_CORS_ORIGINS" help:"Browser origins (https://app.example.com, or *) whose scripts may call the API; comma-separated. Empty: none (no CORS headers)."`
	PollCacheTTL  time.Duration  `name:"poll-cache-ttl" env:"FEEDAPI_POLL_CACHE_TTL" default:"1s" help:"Longest the first page of /v1/posts or /v1/firehose (per parameter set) is answered from memory, without a query, after it was read; the most a poller's answer lags behind a write (0: no cache)."`
	StreamLimits  map[string]int `name:"stream-limit" env:"FEEDAPI_STREAM_LIMITS" help:"Open SSE streams and GraphQL subscriptions together per key of each tier, per process, e.g. free=2;pro=10;internal=100 (those are the defaults)."`
	StreamBeat    time.Duration  `name:"stream-heartbeat" env:"FEEDAPI_STREAM_HEARTBEAT" default:"15s" help:"Interval of the streams' heartbeat comments, the websocket pings and the live feeds' safety reads; a client that acknowledges nothing for three of them is taken for gone."`
	StreamSlow    time.Duration  `name:"stream-slow-write" env:"FEEDAPI_STREAM_SLOW_WRITE" default:"5s" help:"A stream whose client takes longer than this to take a write is ended with a slow_reader event."`
	Proxies       []string       `name:"trusted-proxy" env:"FEEDAPI_TRUSTED_PROXIES" help:"CIDR prefixes of the load balancers or reverse proxies whose X-Forwarded-For gives the client IP (per-IP limit, access log), e.g. 10.0.0.0/8,fd00::/8. Empty: the TCP peer is the client and X-Forwarded-For is ignored."`
}

// serveCmd serves the API over an existing database.
type serveCmd struct {
	serveFlags
}

// Run implements the command.
func (c serveCmd) Run(ctx context.Context, g *globals) error {
	return c.serve(ctx, g, nil)
}

// demoCmd prepares a demo database and serves it.
type demoCmd struct {
	serveFlags
	Live         bool          `default:"true" negatable:"" help:"Keep publishing new posts and firehose messages while serving (--live=false or --no-live to turn it off)."`
	LiveInterval time.Duration `name:"live-interval" default:"5s" help:"Time between two rounds of live demo data."`
}

// Run implements the command.
func (c demoCmd) Run(ctx context.Context, g *globals) error {
	if err := db.Migrate(ctx, g.DatabaseURL, g.stderr); err != nil {
		return err
	}
	bulk, err := g.open(true)
	if err != nil {
		return err
	}
	defer bulk.Close()
	empty, err := seed.IsEmpty(ctx, bulk)
	if err != nil {
		return err
	}
	if empty {
		fmt.Fprintln(g.stderr, "seeding demo data…")
		// Another demo starting at the same moment may have won the race;
		// its data is as good as ours.
		if _, err := seed.Run(ctx, bulk, seed.Options{}, g.stderr); err != nil && !errors.Is(err, seed.ErrNotEmpty) {
			return err
		}
	}
	// Each start replaces the keys of the start before, so that restarts do
	// not pile up live demo keys.
	svc := keys.NewService(bulk, keys.Options{})
	free, _, err := svc.Replace(ctx, db.TierFree, "demo free")
	if err != nil {
		return err
	}
	internal, _, err := svc.Replace(ctx, db.TierInternal, "demo internal")
	if err != nil {
		return err
	}
	ready := func(addr string) {
		base := "http://" + hostPort(addr)
		fmt.Fprintf(g.stdout, `
feedapi demo is serving on %[1]s

  free key:     %[2]s
  internal key: %[3]s

  curl -H "Authorization: Bearer %[2]s" '%[1]s/v1/posts?limit=2'
  curl '%[1]s/v1/health'
  GraphiQL: open %[1]s/graphql in a browser and enter the internal key

`, base, free, internal)
	}
	if !c.Live {
		return c.serve(ctx, g, ready)
	}
	if c.LiveInterval <= 0 {
		return fmt.Errorf("--live-interval must be positive")
	}
	stop := startLive(ctx, bulk, c.LiveInterval, g.logger)
	defer stop()
	return c.serve(ctx, g, ready)
}

// serve wires the service and runs it until ctx ends, then shuts down
// gracefully. ready, if set, is called once the listener is open.
func (c serveFlags) serve(ctx context.Context, g *globals, ready func(addr string)) error {
	// With PostgreSQL on the same few cores, fewer backends competing for
	// them serve more requests than many; four per core leaves room for a
	// database on a host of its own to be set with --db-max-conns.
	if c.DBMaxConns <= 0 {
		c.DBMaxConns = 4 * runtime.NumCPU()
	}
	retention, err := c.retentionFlag.parse()
	if err != nil {
		return err
	}
	bdb, err := db.Open(g.DatabaseURL, db.Options{MaxOpenConns: c.DBMaxConns, StatementTimeout: c.DBStatementTO})
	if err != nil {
		return err
	}
	defer bdb.Close()
	replica, err := openReplica(c.ReplicaURL, db.Options{MaxOpenConns: c.DBMaxConns, StatementTimeout: c.DBStatementTO})
	if err != nil {
		return err
	}
	reads := bdb
	keyOpts := keys.Options{Logger: g.logger}
	if replica != nil {
		defer replica.Close()
		reads = replica
		keyOpts.Replica = replica
	}
	ping, pingPrimary := databasePings(bdb, replica)

	metrics, stopAdmin, err := c.startAdmin(g.logger, bdb, replica)
	if err != nil {
		return err
	}
	defer stopAdmin()

	keySvc := keys.NewService(bdb, keyOpts)
	defer keySvc.Close()

	var rdb *redis.Client
	if c.RedisURL != "" {
		opts, err := redis.ParseURL(c.RedisURL)
		if err != nil {
			return fmt.Errorf("parse REDIS_URL: %w", err)
		}
		// Bounded timeouts and no retries: when Redis is away the limiter
		// falls back to local counters instead of stalling requests. Not
		// much shorter, though: a busy replica whose answers from Redis
		// take a few hundred milliseconds must not take Redis for away and
		// count on its own, which would give keys more than their limit.
		opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.MaxRetries = time.Second, time.Second, time.Second, -1
		rdb = redis.NewClient(opts)
		defer rdb.Close()
	}

	ln, err := net.Listen("tcp", c.Addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	serverURL, altURL := c.serverURLs(ln.Addr().String())

	// The change signal: one listening connection to the primary (NOTIFY
	// does not reach read replicas), reconnecting by itself.
	hub := live.NewHub()
	listenCtx, stopListen := context.WithCancel(context.WithoutCancel(ctx))
	defer stopListen()
	// The firehose's months ahead and its retention, on the primary.
	go db.KeepFirehose(listenCtx, bdb, db.KeepOptions{Retention: retention, Logger: g.logger})
	go db.Listen(listenCtx, g.DatabaseURL, db.ListenOptions{Logger: g.logger}, hub.Resync, hub.Notice) //nolint:errcheck // ends with listenCtx
	// The first pages pollers ask for, ended by the change signal as soon as
	// their rows change; the TTL bounds only what a lost signal leaves.
	polls := rest.NewPollCache(c.PollCacheTTL)
	go invalidateOnChange(hub.Subscribe(listenCtx), polls)
	// The live feeds: SSE streams and subscriptions.
	feeds := live.New(live.Config{Hub: hub, Heartbeat: c.StreamBeat, SlowWrite: c.StreamSlow,
		Limits: c.StreamLimits, ReadTimeout: c.RequestTO, Revoked: keySvc.Revoked, Logger: g.logger})

	handler, err := rest.New(rest.Config{
		Graph: graph.Config{Store: db.NewStore(reads), Logger: g.logger, Ping: ping, PingPrimary: pingPrimary,
			Limits: graph.Limits{MaxResponseBytes: c.GQLMaxResp, MaxPageBytes: c.MaxPageBytes}},
		Live: feeds,
		Auth: auth.Config{
			Keys:             keySvc,
			RateLimit:        c.RateLimit,
			TierRateLimits:   c.TierLimits,
			IPRateLimit:      c.IPRateLimit,
			AuthFailureLimit: c.AuthFailures,
			RefusalDelay:     refusalDelay(c.RefusalDelay),
			TrustedProxies:   c.Proxies,
		},
		ETFEnabled:       c.ETFEnabled,
		Version:          version(),
		ServerURL:        serverURL,
		AltServerURL:     altURL,
		CORSOrigins:      c.CORSOrigins,
		Redis:            rdb,
		RedisPrefix:      c.RedisPrefix,
		Logger:           g.logger,
		Metrics:          metrics,
		RequestTimeout:   c.RequestTO,
		PollCache:        polls,
		DisablePollCache: polls == nil,
	})
	if err != nil {
		return err
	}
	if err := pingAll(ctx, ping, pingPrimary); err != nil {
		g.logger.Warn("database unreachable at start; serving degraded until it answers", slog.Any("error", err))
	}
	srv := rest.NewServer(c.Addr, handler, feeds.Config().DeadPeer())
	return serveOn(ctx, ln, srv, c.ShutdownGrace, g.logger, ready, feeds.Shutdown)
}

// serverURLs are the OpenAPI document's servers: the flags when set, else
// the address listened on, by name and by IP, so that a client generated
// from the document reaches this very process.
func (c serveFlags) serverURLs(listenAddr string) (primary, alt string) {
	if c.PublicURL != "" {
		return c.PublicURL, c.AltURL
	}
	hp := hostPort(listenAddr)
	primary = "http://" + hp
	if host, port, err := net.SplitHostPort(hp); err == nil && host == "localhost" {
		alt = "http://" + net.JoinHostPort("127.0.0.1", port)
	}
	if c.AltURL != "" {
		alt = c.AltURL
	}
	return primary, alt
}

// serveOn serves on ln until ctx ends, then stops accepting connections and
// lets in-flight requests finish within grace while the live feeds end
// (each stream its final event, a client that does not read cut):
// endFeeds, when not nil, ends them and waits for them.
func serveOn(ctx context.Context, ln net.Listener, srv *http.Server, grace time.Duration, log *slog.Logger, ready func(addr string), endFeeds func(context.Context) error) error {
	log.Info("serving", slog.String("addr", ln.Addr().String()), slog.String("version", version()))
	if ready != nil {
		ready(ln.Addr().String())
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", slog.Duration("grace", grace))
	shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), grace)
	defer cancel()
	// Streams and subscriptions never end by themselves, and Shutdown does
	// not wait for connections taken from it: they end at once, beside the
	// requests in flight, which Shutdown waits for.
	feedsEnded := make(chan error, 1)
	go func() {
		if endFeeds == nil {
			feedsEnded <- nil
			return
		}
		feedsEnded <- endFeeds(shutdownCtx)
	}()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	if err := <-feedsEnded; err != nil {
		return fmt.Errorf("graceful shutdown: %w", err)
	}
	// A stream whose request was in flight may have joined its feed after
	// the feeds ended (its handler hands the connection over and returns):
	// now that no handler runs, end those too.
	if endFeeds != nil {
		if err := endFeeds(shutdownCtx); err != nil {
			return fmt.Errorf("graceful shutdown: %w", err)
		}
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// hostPort turns a listen address such as [::]:8080 into one a client can use.
func hostPort(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || host == "::" || host == "0.0.0.0" {
		return "localhost:" + port
	}
	return net.JoinHostPort(host, port)
}

// invalidateOnChange ends the cached first pages of posts or firehose on
// each change of their rows (and on a resync, which names every kind).
func invalidateOnChange(changes <-chan live.Change, polls *rest.PollCache) {
	for change := range changes {
		switch change.Kind {
		case rest.PollPosts, rest.PollFirehose:
			polls.Invalidate(change.Kind)
		}
	}
}

// refusalDelay maps the flag's 0 ("not held") to rest.Config's negative.
func refusalDelay(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}
