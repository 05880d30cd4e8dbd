package rest

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/httprate"
	"github.com/zeebo/xxh3"
)

// rateWindow is the window of every rate limit.
const rateWindow = time.Minute

// limiterShards spreads keys over independent limiters: httprate serialises
// each limiter's check-and-increment under one mutex, which with Redis
// counters would hold every request of the replica for two round trips.
// A key always lands on the same shard, so its own check stays atomic.
const limiterShards = 32

// Names of the rate-limit headers (IETF draft "RateLimit header fields"),
// written in Go's canonical form, which net/http sends anyway, so that
// setting them does not allocate a canonical copy per request.
const (
	hLimit     = "Ratelimit-Limit"
	hRemaining = "Ratelimit-Remaining"
	hReset     = "Ratelimit-Reset"
	hPolicy    = "Ratelimit-Policy"
	hRateLimit = "Ratelimit"
)

// limiter counts requests per key in a rolling minute (httprate's sliding
// window) and writes the rate-limit headers.
type limiter struct {
	shards []*httprate.RateLimiter
	log    *slog.Logger
}

type counterErrKey struct{}

// newLimiter returns a limiter of limit requests per minute by default.
// counter is the shared counter store (Redis); nil means in-process counters.
func newLimiter(limit int, counter httprate.LimitCounter, log *slog.Logger) *limiter {
	l := &limiter{shards: make([]*httprate.RateLimiter, limiterShards), log: log}
	for i := range l.shards {
		opts := []httprate.Option{
			httprate.WithResponseHeaders(httprate.ResponseHeaders{
				Limit: hLimit, Remaining: hRemaining, Reset: hReset,
			}),
			// A counter failure is reported through the request's context
			// (see allow) instead of a response: the request goes through.
			httprate.WithErrorHandler(func(_ http.ResponseWriter, r *http.Request, err error) {
				if p, ok := r.Context().Value(counterErrKey{}).(*error); ok {
					*p = err
				}
			}),
		}
		if counter != nil {
			opts = append(opts, httprate.WithLimitCounter(counter))
		}
		l.shards[i] = httprate.NewRateLimiter(limit, rateWindow, opts...)
	}
	return l
}

// allow counts the request against key with the given per-minute limit,
// sets RateLimit-Limit, -Remaining, -Reset (seconds until the current
// window ends), RateLimit-Policy and RateLimit, and reports whether the
// request is within the limit. When the counter store fails the request is
// let through (and logged): an outage of Redis must not take the API down.
func (l *limiter) allow(w http.ResponseWriter, r *http.Request, key string, limit int) bool {
	var counterErr error
	ctx := context.WithValue(r.Context(), counterErrKey{}, &counterErr)
	ctx = httprate.WithRequestLimit(ctx, limit)
	shard := l.shards[xxh3.HashString(key)%uint64(len(l.shards))]
	over := shard.OnLimit(w, r.WithContext(ctx), key)

	h := w.Header()
	remaining, err := strconv.Atoi(h.Get(hRemaining))
	if err != nil {
		remaining = limit
	}
	remaining = min(max(remaining, 0), limit)
	window := int64(rateWindow / time.Second)
	reset := window
	if unix, err := strconv.ParseInt(h.Get(hReset), 10, 64); err == nil {
		reset = min(max(unix-time.Now().Unix(), 0), window)
	}
	if counterErr != nil {
		l.log.WarnContext(r.Context(), "rate-limit counter failed; request let through",
			slog.String("request_id", requestID(r.Context())), slog.Any("error", counterErr))
		over = false
	}
	q, rem, t := strconv.Itoa(limit), strconv.Itoa(remaining), strconv.FormatInt(reset, 10)
	w2 := strconv.FormatInt(window, 10)
	h.Set(hLimit, q)
	h.Set(hRemaining, rem)
	h.Set(hReset, t)
	h.Set(hPolicy, `"default";q=`+q+`;w=`+w2)
	h.Set(hRateLimit, `"default";r=`+rem+`;t=`+t)
	return !over
}
