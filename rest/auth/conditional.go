package auth

import (
	"net/http"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/ratelimit"
)

// A 304 Not Modified does not count against the key's rate limit (GitHub's
// practice): a conditional request (GET or HEAD with If-None-Match) of a
// key within its limit is counted only once its answer turns out to be
// something else. A key over its limit gets 429 whatever it sends, so
// conditional requests are no way around the limit; the order of checks
// (401, 403, 429, then 400) is unchanged.

// conditional reports whether r may be answered 304.
func conditional(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && len(r.Header["If-None-Match"]) > 0
}

// countUnlessNotModified is the ResponseWriter of a conditional request
// that was within its key's limit when it arrived (a peek, which set the
// rate-limit headers): when the answer starts with any status but 304, the
// request is counted (and the headers set from the count) before anything
// is sent; should the count be refused (other requests of the key took the
// last of its budget meanwhile) the answer becomes the 429 it would have
// been, and the handler's writes are dropped.
type countUnlessNotModified struct {
	http.ResponseWriter
	g       *Guard
	r       *http.Request
	budget  string
	limit   int
	decided bool
	refused bool
}

func (c *countUnlessNotModified) decide(code int) {
	if c.decided {
		return
	}
	c.decided = true
	if code == http.StatusNotModified {
		return
	}
	d := c.g.rates.Take(c.r.Context(), c.budget, c.limit)
	h := c.ResponseWriter.Header()
	ratelimit.SetHeaders(h, ratelimit.PolicyDefault, c.limit, d)
	if d.Allowed {
		return
	}
	c.refused = true
	for _, name := range []string{"Etag", "Content-Encoding", "Content-Length", contract.PollIntervalHeader} {
		delete(h, name)
	}
	c.g.env.Error(c.ResponseWriter, c.r, apperr.New(apperr.RateLimited, rateLimitedMessage(c.limit)))
}

func (c *countUnlessNotModified) WriteHeader(code int) {
	c.decide(code)
	if !c.refused {
		c.ResponseWriter.WriteHeader(code)
	}
}

func (c *countUnlessNotModified) Write(b []byte) (int, error) {
	c.decide(http.StatusOK)
	if c.refused {
		return len(b), nil
	}
	return c.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (c *countUnlessNotModified) Unwrap() http.ResponseWriter { return c.ResponseWriter }
