package graph

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/executor"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/generated"
	"github.com/feedapi/feedapi/graph/live"
)

// APIVersion is the version of the public API reported by health.
const APIVersion = "v1"

// Config holds what the GraphQL layer needs. Zero fields take defaults.
type Config struct {
	// Store runs the queries. Required.
	Store *db.Store
	// ETFEnabled exposes the ETF fields; when false they are absent from the schema.
	ETFEnabled bool
	// Version is the build version reported by health.
	Version string
	// Logger receives internal errors and recovered panics (default: discard).
	Logger *slog.Logger
	// Limits bound every operation; zero fields take DefaultLimits' values.
	Limits Limits
	// Ping checks the database the queries read from, for health (default:
	// Store.Ping). It is called with Limits.PingTimeout and its failure
	// never fails a request.
	Ping func(ctx context.Context) error
	// PingPrimary, set when Store reads from a replica, checks the primary,
	// which holds the API keys. Health then reports both, and the primary
	// alone being away degrades health without making the API unreadable.
	PingPrimary func(ctx context.Context) error
	// SocketContext, when set, returns the context a websocket starts from,
	// made from its upgrade request's: the values its operations and
	// WebsocketInit need, and not the request's, which hold the request
	// and its connection's buffers for as long as the socket lives.
	// Without it a socket keeps only the request's principal.
	SocketContext func(ctx context.Context) context.Context
	// WebsocketInit checks the connection_init payload of a websocket
	// connection and returns the context its operations run in; nil
	// accepts every connection (the caller checked the upgrade request).
	WebsocketInit func(ctx context.Context, payload map[string]any) (context.Context, error)
	// Live is the live feeds of the process (live.New), which the
	// subscriptions join; without it they answer bad_request.
	Live *live.Live
	// ChargeOperation, when set, is called for each operation sent on a
	// websocket (queries and subscriptions alike), before it runs, with
	// the context of the connection's key: the operation is refused with
	// its error (rate_limited) instead of running. Operations sent as HTTP
	// requests are charged by the caller's middleware.
	ChargeOperation func(ctx context.Context) error
	// Extensions are further gqlgen extensions (metrics, tracing), used
	// after feedapi's own by NewHandler, NewExecutor and ConfigureExecutor.
	// A field interceptor (graphql.FieldInterceptor) is refused with a
	// panic: the executable schema writes plain fields without running
	// field middleware (see graph/internal/codegen), so it would miss most
	// fields.
	Extensions []graphql.HandlerExtension
}

// Limits bound what one operation may ask for.
type Limits struct {
	// MaxComplexity is the complexity budget of an operation, in the units
	// of the cost model (cost.go: about 32 bytes of response each). A field
	// costs 1 plus its selection, a long text field its typical size, a
	// list its page size times its selection.
	MaxComplexity int
	// MaxDepth is the deepest field nesting allowed (introspection excepted).
	MaxDepth int
	// MaxTokens is the parser's token limit for a query document.
	MaxTokens int
	// MaxBodyBytes is the largest POST body /graphql reads; a larger one
	// is refused with 413.
	MaxBodyBytes int64
	// MaxResponseBytes is the largest response (the bytes of data, summed
	// over an operation's payloads) /graphql sends; a larger one is
	// replaced by a bad_request error that names the limit, never
	// truncated. The fixed REST queries are bounded by MaxPageBytes
	// instead.
	MaxResponseBytes int
	// MaxPageBytes bounds the long texts (db/bound.go) one operation of an
	// executor (NewExecutor, ConfigureExecutor: the REST layer's fixed
	// queries) reads: a list ends early once the next item would take its
	// texts over it, with a cursor that goes on from there, and an item
	// alone over it is refused with a bad_request that names the fields
	// to leave out. At least MinPageBytes.
	MaxPageBytes int
	// QueryCacheSize is the number of parsed and validated documents kept.
	QueryCacheSize int
	// BatchWait is how long a dataloader collects keys before it queries.
	BatchWait time.Duration
	// PingTimeout bounds the health check's database ping.
	PingTimeout time.Duration
}

// MinPageBytes is the smallest Limits.MaxPageBytes: the longest text an
// item can hold without its optional fields (a body, a brief's content)
// is bounded by the importer's line, 1 MiB, so that a page of at least
// that much always serves one item whole once the request leaves the
// optional fields (include_raw, include_summary) out.
const MinPageBytes = 1 << 20

// DefaultLimits returns the limits used for zero fields of Config.Limits.
func DefaultLimits() Limits {
	return Limits{
		MaxComplexity: 10000,
		MaxDepth:      8,
		MaxTokens:     5000,
		MaxBodyBytes:  64 << 10,
		// 13 times what the complexity budget admits of typical data
		// (10,000 units of about 32 bytes): only unusually long texts
		// come near it.
		MaxResponseBytes: 4 << 20,
		// Four times the longest item the importer takes (a line of
		// 1 MiB; raw may be written out longer): every importable item
		// fits a page, and a page of a hundred ordinary items never
		// comes near it.
		MaxPageBytes:   4 << 20,
		QueryCacheSize: 1000,
		// gqlgen resolves the relation fields of a list's items in one
		// goroutine each, all started within microseconds of each other; 2ms
		// lets every one of them enqueue its key before the batch runs while
		// adding little latency (only operations that use relations wait).
		BatchWait:   2 * time.Millisecond,
		PingTimeout: time.Second,
	}
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	if l.MaxComplexity <= 0 {
		l.MaxComplexity = d.MaxComplexity
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxTokens <= 0 {
		l.MaxTokens = d.MaxTokens
	}
	if l.MaxBodyBytes <= 0 {
		l.MaxBodyBytes = d.MaxBodyBytes
	}
	if l.MaxResponseBytes <= 0 {
		l.MaxResponseBytes = d.MaxResponseBytes
	}
	if l.MaxPageBytes <= 0 {
		l.MaxPageBytes = d.MaxPageBytes
	}
	if l.QueryCacheSize <= 0 {
		l.QueryCacheSize = d.QueryCacheSize
	}
	if l.BatchWait <= 0 {
		l.BatchWait = d.BatchWait
	}
	if l.PingTimeout <= 0 {
		l.PingTimeout = d.PingTimeout
	}
	return l
}

func (cfg Config) withDefaults() Config {
	if cfg.Store == nil {
		panic("graph: Config.Store is required")
	}
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Ping == nil {
		cfg.Ping = cfg.Store.Ping
	}
	return cfg
}

// NewSchema returns the executable schema over cfg.Store. Without ETF flows
// its Schema() lacks Query.etfFlows, Query.etfFlowsLatest and
// Sources.etfAssets, so validation refuses them and introspection hides them.
func NewSchema(cfg Config) graphql.ExecutableSchema {
	cfg = cfg.withDefaults()
	gc := generated.Config{Resolvers: newResolver(cfg)}
	setComplexity(&gc.Complexity)
	if !cfg.ETFEnabled {
		gc.Schema = withoutETF(generated.NewExecutableSchema(generated.Config{}).Schema())
	}
	return generated.NewExecutableSchema(gc)
}

// executorLike is what both *executor.Executor and *handler.Server offer.
type executorLike interface {
	Use(graphql.HandlerExtension)
	SetErrorPresenter(graphql.ErrorPresenterFunc)
	SetRecoverFunc(graphql.RecoverFunc)
	SetQueryCache(graphql.Cache[*ast.QueryDocument])
	SetParserTokenLimit(int)
}

func configure(e executorLike, cfg Config) {
	e.SetErrorPresenter(errorPresenter(cfg.Logger))
	e.SetRecoverFunc(recoverFunc)
	e.SetQueryCache(lru.New[*ast.QueryDocument](cfg.Limits.QueryCacheSize))
	e.SetParserTokenLimit(cfg.Limits.MaxTokens)
	switch x := e.(type) {
	case *executor.Executor:
		x.SetDefaultRulesFn(validationRules)
	case *handler.Server:
		x.SetValidationRulesFn(validationRules)
	}
	e.Use(&exactVariables{})
	e.Use(introspectionForInternal{})
	e.Use(depthLimit{max: cfg.Limits.MaxDepth})
	e.Use(complexityLimit{extension.FixedComplexityLimit(cfg.Limits.MaxComplexity)})
	e.Use(loaderExtension{store: cfg.Store, wait: cfg.Limits.BatchWait})
	for _, ext := range cfg.Extensions {
		if _, ok := ext.(graphql.FieldInterceptor); ok {
			panic(fmt.Sprintf("graph: extension %s is a field interceptor, which plain fields bypass", ext.ExtensionName()))
		}
		e.Use(ext)
	}
}

// ConfigureExecutor applies feedapi's extensions to e, an executor over
// NewSchema(cfg): error presenter, panic recovery, query cache, parser token
// limit, exact variable values (enums are case-sensitive), introspection
// for the internal tier only, depth and complexity limits, the
// per-operation dataloaders and the page budget of Limits.MaxPageBytes.
func ConfigureExecutor(e *executor.Executor, cfg Config) {
	cfg = cfg.withDefaults()
	configure(e, cfg)
	e.Use(pageBound{maxBytes: cfg.Limits.MaxPageBytes})
}

// WithResponseBuffer returns a context under which a query run in-process
// by an executor of NewExecutor writes its response into buf, which must be
// empty, instead of allocating a buffer: the response's Data aliases buf
// until the caller reuses it. Callers that pool their buffers use it.
func WithResponseBuffer(ctx context.Context, buf *bytes.Buffer) context.Context {
	return generated.WithResponseBuffer(ctx, buf)
}

// NewExecutor returns an in-process executor over NewSchema(cfg), configured
// by ConfigureExecutor.
func NewExecutor(cfg Config) *executor.Executor {
	cfg = cfg.withDefaults()
	e := executor.New(NewSchema(cfg))
	ConfigureExecutor(e, cfg)
	return e
}

// NewHandler returns the /graphql HTTP handler: queries by POST and GET
// (the GraphiQL page for browsers is the REST layer's). A POST
// body over Limits.MaxBodyBytes or not in the shape of a GraphQL request is
// refused before parsing, a response over Limits.MaxResponseBytes is
// replaced by an error, and every error of a refused request carries an
// extensions.code. An operation's internal errors are logged once, with
// the request id of WithRequestID. The caller puts authentication and the
// tier check in front of it.
func NewHandler(cfg Config) http.Handler {
	cfg = cfg.withDefaults()
	srv := handler.New(NewSchema(cfg))
	lc := live.Config{Heartbeat: live.DefaultHeartbeat, SlowWrite: live.DefaultSlowWrite}
	if cfg.Live != nil {
		lc = cfg.Live.Config()
	}
	// Subscriptions first: SSE takes POSTs that accept text/event-stream,
	// the websocket GETs that upgrade.
	srv.AddTransport(transport.SSE{KeepAlivePingInterval: lc.Heartbeat})
	srv.AddTransport(socketTransport{live: cfg.Live, context: cfg.SocketContext, check: cfg.WebsocketInit, charge: cfg.ChargeOperation,
		readLimit: cfg.Limits.MaxBodyBytes, heartbeat: lc.Heartbeat, cfg: lc, log: cfg.Logger})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(newPostTransport())
	configure(srv, cfg)
	srv.Use(liveTransports{})
	srv.Use(operationGuard{log: cfg.Logger, maxBytes: cfg.Limits.MaxResponseBytes})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			// The websocket transport answers on its own connection.
			srv.ServeHTTP(w, r)
			return
		}
		var params *graphql.RawParams
		if r.Method == http.MethodPost {
			if params = checkBody(w, r, cfg.Limits.MaxBodyBytes); params == nil {
				return
			}
		}
		if _, ok := w.(http.Flusher); ok && r.Method == http.MethodPost && strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			// Subscriptions write as they go; their errors are coded by
			// the error presenter.
			srv.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sseKey{}, true)))
			return
		}
		cw := &codedErrors{ResponseWriter: w, params: params}
		srv.ServeHTTP(cw, r)
		cw.finish()
	})
}
