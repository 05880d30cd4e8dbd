// Package metrics holds the Prometheus metrics of the REST layer; package
// rest records into them.
package metrics

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedapi/feedapi/graph"
)

// Metrics are the Prometheus metrics of the REST layer: requests and their
// latency by route, rate-limit refusals, the complexity of GraphQL
// operations and whether the rate-limit counters fell back from Redis to
// local ones. Build them with New over the registry the caller
// serves (away from the public listener) and pass them in Config.Metrics.
// A nil *Metrics records nothing.
type Metrics struct {
	requests      *prometheus.CounterVec   // method, route, status
	duration      *prometheus.HistogramVec // method, route
	refusals      *prometheus.CounterVec   // scope: key or ip
	complexity    prometheus.Histogram     // per /graphql operation
	redisFallback prometheus.Gauge
}

// Label values of the metrics.
const (
	RouteUnmatched = "unmatched" // the route of 404s and 405s: chi matched none
	ScopeKey       = "key"       // refused by the per-key limit
	ScopeIP        = "ip"        // refused by the per-client-IP limit
	ScopeAuth      = "auth"      // refused by the per-client-IP budget of failed authentications
)

// New creates the metrics of the REST layer and registers them with
// reg. Their names:
//
//	feedapi_http_requests_total{method,route,status}       counter
//	feedapi_http_request_duration_seconds{method,route}    histogram
//	feedapi_rate_limit_refusals_total{scope}               counter, scope "key", "ip" or "auth"
//	feedapi_graphql_complexity                             histogram, per /graphql operation
//	feedapi_rate_limit_redis_fallback                      gauge, 1 while Redis is away
//
// route is chi's route pattern (/v1/posts/{id}), or "unmatched" for a path
// no route matches, so that clients cannot grow the number of series.
func New(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feedapi_http_requests_total",
			Help: "HTTP requests answered, by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "feedapi_http_request_duration_seconds",
			Help:    "Time from a request's arrival until its handler returned, by method and route pattern.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"method", "route"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feedapi_rate_limit_refusals_total",
			Help: `Requests refused with 429, by the limit that refused them: "key" (per API key), "ip" (per client IP, unauthenticated endpoints) or "auth" (per client IP, failed authentications).`,
		}, []string{"scope"}),
		complexity: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "feedapi_graphql_complexity",
			Help:    "Computed complexity of each /graphql operation that was parsed and validated, including those refused for exceeding the budget.",
			Buckets: []float64{1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000},
		}),
		redisFallback: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "feedapi_rate_limit_redis_fallback",
			Help: "1 while Redis is configured but unreachable and this replica counts rate limits locally; 0 otherwise.",
		}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.refusals, m.complexity, m.redisFallback} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("rest: register metrics: %w", err)
		}
	}
	// Both scopes exist from the start, so that a rate of refusals is 0
	// rather than absent before the first one.
	m.refusals.WithLabelValues(ScopeKey)
	m.refusals.WithLabelValues(ScopeIP)
	m.refusals.WithLabelValues(ScopeAuth)
	return m, nil
}

// ObserveRequest records a finished request; scope names the limit that
// refused it when status is 429 (see access.refusalScope).
func (m *Metrics) ObserveRequest(method, route string, status int, d time.Duration, scope string) {
	if m == nil {
		return
	}
	method = metricMethod(method)
	m.requests.WithLabelValues(method, route, strconv.Itoa(status)).Inc()
	m.duration.WithLabelValues(method, route).Observe(d.Seconds())
	if status == http.StatusTooManyRequests {
		m.refusals.WithLabelValues(scope).Inc()
	}
}

// metricMethod bounds the method label: a client may send any token.
func metricMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost:
		return m
	}
	return "OTHER"
}

// SetRedisFallback records whether the rate-limit counters are local
// because Redis is away.
func (m *Metrics) SetRedisFallback(local bool) {
	if m == nil {
		return
	}
	v := 0.0
	if local {
		v = 1
	}
	m.redisFallback.Set(v)
}

// complexityObserver observes the complexity that gqlgen's complexity
// limit computed for an operation. It intercepts the response, which every
// operation that reached the limit has: executed ones and those refused
// (for their complexity or by a later check) alike.
type complexityObserver struct {
	h prometheus.Histogram
}

var _ interface {
	graphql.HandlerExtension
	graphql.ResponseInterceptor
} = complexityObserver{}

// ExtensionName implements graphql.HandlerExtension.
func (complexityObserver) ExtensionName() string { return "FeedapiComplexityMetrics" }

// Validate implements graphql.HandlerExtension.
func (complexityObserver) Validate(graphql.ExecutableSchema) error { return nil }

// InterceptResponse implements graphql.ResponseInterceptor.
func (o complexityObserver) InterceptResponse(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
	if graphql.HasOperationContext(ctx) {
		if st := extension.GetComplexityStats(ctx); st != nil {
			o.h.Observe(float64(st.Complexity))
		}
	}
	return next(ctx)
}

// WithGraph returns cfg with the extensions that feed the metrics from the
// /graphql handler added.
func (m *Metrics) WithGraph(cfg graph.Config) graph.Config {
	if m == nil {
		return cfg
	}
	cfg.Extensions = append(slices.Clip(cfg.Extensions), complexityObserver{m.complexity})
	return cfg
}
