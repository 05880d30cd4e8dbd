package auth

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/metrics"
	"github.com/feedapi/feedapi/rest/ratelimit"
)

// Defaults of the early refusal of a client IP whose failed-authentication
// budget is spent (Config.RefusalDelay, RefusalHoldMax, RefusalLogInterval).
const (
	// DefaultRefusalDelay holds each early refusal this long before it is
	// answered: a closed-loop flood then sends at most one request per
	// connection and second.
	DefaultRefusalDelay = time.Second
	// DefaultRefusalHoldMax bounds the refusals held at once; past it they
	// are answered at once. A closed-loop flood (a few dozen connections,
	// each waiting for its answer) is slowed by the hold; an open-loop flood
	// answered at once keeps reusing its connections, while one held would
	// open new ones, and a large hold lets such a flood crowd out the
	// legitimate clients' connections; a few dozen slows the closed loops
	// without that.
	DefaultRefusalHoldMax = 64
	// DefaultRefusalLogInterval is how often one line sums up the early
	// refusals of one client IP, instead of an access log line each.
	DefaultRefusalLogInterval = 10 * time.Second
)

// refuser answers, first in the chain, the requests that Authenticate
// would answer 429 because their client IP's failed-authentication budget
// is spent: before the request id middleware's bookkeeping, the access log,
// CORS and routing of the full handler, with a pre-rendered envelope. It
// knows a client IP is spent from Authenticate (refuseAuth notes until when),
// so it adds no lookup of its own to the rate store; after that time the
// request takes the full path, which asks the store again.
type refuser struct {
	blocked  blockedIPs
	log      *refusalLog
	metrics  *metrics.Metrics
	tooLarge func(*http.Request) bool // the full path answers 431
	clock    func() time.Time
	delay    time.Duration
	holdMax  int64
	held     atomic.Int64
	ctxs     sync.Pool // *chi.Context for route matching
	body     []byte    // the envelope up to the request id's value
	policy   []string  // RateLimit-Policy
	limit    []string  // RateLimit-Limit
	rateLine [][]string
	resetVal [][]string
	length   []string // Content-Length
	vary     []string // Vary: the full path's (Origin first when CORS is on)
}

// Constant header values of an early refusal, shared by every answer
// (net/http only reads them).
var (
	refusalContentType = []string{envelope.ContentTypeJSON}
	refusalCache       = []string{envelope.CacheNone}
	refusalNosniff     = []string{"nosniff"}
	refusalRetryAfter  = []string{envelope.RetryAfter}
	refusalRemaining   = []string{"0"}
	refusalVary        = []string{"Accept-Encoding"}
	refusalVaryCORS    = []string{"Origin", "Accept-Encoding"}
)

// refusalBodyEnd closes the envelope after the request id.
const refusalBodyEnd = `"}}`

// newRefuser returns the early refusal of a budget of authFailures; cors
// says whether browser origins are allowed, whose answers all vary by
// Origin.
func newRefuser(authFailures int, clock func() time.Time, delay time.Duration, holdMax int, log *refusalLog, cors bool,
	m *metrics.Metrics, tooLarge func(*http.Request) bool) *refuser {
	window := int64(ratelimit.Window / time.Second)
	q := strconv.Itoa(authFailures)
	f := &refuser{
		log:      log,
		metrics:  m,
		tooLarge: tooLarge,
		clock:    clock,
		delay:    delay,
		holdMax:  int64(holdMax),
		policy:   []string{ratelimit.PolicyAuthFailed + `;q=` + q + `;w=` + strconv.FormatInt(window, 10)},
		limit:    []string{q},
		vary:     refusalVary,
	}
	if cors {
		f.vary = refusalVaryCORS
	}
	for t := int64(0); t <= window; t++ {
		ts := strconv.FormatInt(t, 10)
		f.resetVal = append(f.resetVal, []string{ts})
		f.rateLine = append(f.rateLine, []string{ratelimit.PolicyAuthFailed + `;r=0;t=` + ts})
	}
	f.body = []byte(`{"error":{"code":"rate_limited","message":` +
		strconv.Quote(authBudgetMessage(authFailures)) +
		`},"meta":{"api_version":"` + envelope.APIVersion + `","tier":null,"request_id":"`)
	f.length = []string{strconv.Itoa(len(f.body) + 32 + len(refusalBodyEnd))} // request ids are 32 hex digits
	f.ctxs.New = func() any { return chi.NewRouteContext() }
	return f
}

// authBudgetMessage is the message of a 429 of the failed-authentication
// budget.
func authBudgetMessage(limit int) string {
	return "too many failed authentications from this address: at most " + strconv.Itoa(limit) +
		" per minute; retry after " + envelope.RetryAfter + " seconds"
}

// match returns the pattern of the route r takes, or "".
func (f *refuser) match(mux *chi.Mux, r *http.Request) string {
	rctx := f.ctxs.Get().(*chi.Context)
	rctx.Reset()
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	route := mux.Find(rctx, r.Method, path)
	f.ctxs.Put(rctx)
	return route
}

// hold delays the answer by the refusal delay, unless RefusalHoldMax
// refusals are held already or the client leaves.
func (f *refuser) hold(ctx context.Context) {
	if f.delay <= 0 {
		return
	}
	if f.held.Add(1) > f.holdMax {
		f.held.Add(-1)
		return
	}
	defer f.held.Add(-1)
	t := time.NewTimer(f.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// write writes the pre-rendered 429: the headers and body that
// Authenticate's refusal has (a test keeps them equal), reset being the
// time until the budget allows a request again.
func (f *refuser) write(w http.ResponseWriter, r *http.Request, id string, reset time.Duration) {
	window := int64(ratelimit.Window / time.Second)
	t := min(max(int64((reset+time.Second-1)/time.Second), 0), window)
	h := w.Header()
	h["Content-Type"] = refusalContentType
	h["Cache-Control"] = refusalCache
	h["Vary"] = f.vary
	h["X-Content-Type-Options"] = refusalNosniff
	h["X-Request-Id"] = []string{id}
	h["Retry-After"] = refusalRetryAfter
	h[ratelimit.HeaderLimit] = f.limit
	h[ratelimit.HeaderRemaining] = refusalRemaining
	h[ratelimit.HeaderReset] = f.resetVal[t]
	h[ratelimit.HeaderPolicy] = f.policy
	h[ratelimit.HeaderRateLimit] = f.rateLine[t]
	h["Content-Length"] = f.length
	w.WriteHeader(http.StatusTooManyRequests)
	if r.Method == http.MethodHead {
		return
	}
	b := make([]byte, 0, len(f.body)+len(id)+len(refusalBodyEnd))
	b = append(append(append(b, f.body...), id...), refusalBodyEnd...)
	_, _ = w.Write(b) // the client went away; nothing to do
}

// blockedIPsMax bounds the client IPs remembered as spent; past it the
// expired ones are dropped, and if none is, all (they are asked again).
const blockedIPsMax = 100000

// blockedIPs remembers until when each client IP's failed-authentication
// budget is spent, as the rate store last answered.
type blockedIPs struct {
	n     atomic.Int64 // entries, read without the lock
	mu    sync.Mutex
	until map[string]time.Time
}

func (b *blockedIPs) empty() bool { return b.n.Load() == 0 }

// block notes that ip's budget is spent until at least until.
func (b *blockedIPs) block(ip string, until time.Time, now time.Time) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.until == nil {
		b.until = map[string]time.Time{}
	}
	if len(b.until) >= blockedIPsMax {
		for k, u := range b.until {
			if !now.Before(u) {
				delete(b.until, k)
			}
		}
		if len(b.until) >= blockedIPsMax {
			clear(b.until)
		}
	}
	b.until[ip] = until
	b.n.Store(int64(len(b.until)))
}

// remaining returns how long ip's budget stays spent, and whether it is.
func (b *blockedIPs) remaining(ip string, now time.Time) (time.Duration, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	u, ok := b.until[ip]
	if !ok {
		return 0, false
	}
	if !now.Before(u) {
		delete(b.until, ip)
		b.n.Store(int64(len(b.until)))
		return 0, false
	}
	return u.Sub(now), true
}

// refusalLog sums up the early refusals of each client IP in one log line
// per interval (message "requests refused", at info level like the access
// log it stands in for): client_ip, refused (how many), policy, seconds
// (the interval) and first_request_id.
type refusalLog struct {
	log      *slog.Logger
	interval time.Duration
	mu       sync.Mutex
	ips      map[string]*refusalCount
}

type refusalCount struct {
	n       int
	firstID string
}

func newRefusalLog(log *slog.Logger, interval time.Duration) *refusalLog {
	return &refusalLog{log: log, interval: interval, ips: map[string]*refusalCount{}}
}

// add counts a refusal of ip; the first of an interval schedules the line.
func (l *refusalLog) add(ip, requestID string) {
	if !l.log.Enabled(context.Background(), slog.LevelInfo) {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if c, ok := l.ips[ip]; ok {
		c.n++
		return
	}
	l.ips[ip] = &refusalCount{n: 1, firstID: requestID}
	time.AfterFunc(l.interval, func() { l.flush(ip) })
}

// flush writes the line of ip's refusals counted so far, if any.
func (l *refusalLog) flush(ip string) {
	l.mu.Lock()
	c, ok := l.ips[ip]
	delete(l.ips, ip)
	l.mu.Unlock()
	if !ok {
		return
	}
	l.log.LogAttrs(context.Background(), slog.LevelInfo, "requests refused",
		slog.String("client_ip", ip),
		slog.Int("refused", c.n),
		slog.String("policy", "failed_auth"),
		slog.Float64("seconds", l.interval.Seconds()),
		slog.String("first_request_id", c.firstID))
}
