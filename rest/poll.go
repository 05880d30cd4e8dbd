package rest

import (
	"bytes"
	"net/http"
	"strconv"
	"time"

	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/pollcache"
)

// Polling: the first pages of /v1/posts and /v1/firehose come from the
// PollCache (package rest/pollcache) when fresh, and every answer of those two
// carries X-Poll-Interval.

// hPollInterval names the header of the polling hint, in Go's canonical
// form.
const hPollInterval = contract.PollIntervalHeader

// pollInterval returns the value of X-Poll-Interval for a cache of ttl:
// the seconds an entry lives, rounded up, and at least minPollInterval.
func pollInterval(ttl time.Duration) []string {
	secs := max(int64((ttl+time.Second-1)/time.Second), contract.MinPollInterval)
	return []string{strconv.FormatInt(secs, 10)}
}

// firstPage reports whether r asks for a first page (no cursor) with GET
// or HEAD, the requests the PollCache answers.
func firstPage(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && !r.URL.Query().Has("cursor")
}

// servePoll answers the first page of a polled endpoint from the cache, or
// runs the query and caches its answer. Parameters are checked first, so a
// bad one gets its 400 whether or not a page is cached.
func (s *server) servePoll(w http.ResponseWriter, r *http.Request, ep endpoint) {
	if _, err := contract.Parse(r.URL.RawQuery, ep.Params); err != nil {
		s.writeError(w, r, ep.restParam(err))
		return
	}
	p, _ := keys.FromContext(r.Context())
	key := pollcache.Key(ep.Query, string(p.Tier), r.URL.RawQuery)
	if e := s.polls.Get(key); e != nil {
		s.env.SendCached(w, r, e.Body, e.Position, e.Tag)
		return
	}
	gen, started := s.polls.Generation(ep.Poll), s.polls.Now()
	data := s.env.Buffer()
	defer s.env.Release(data)
	res, err := s.execute(r, ep, data)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	buf, tagged := s.env.Envelope(r, res)
	tag := envelope.ETagOf(buf.Bytes()[:tagged])
	s.polls.Put(key, ep.Poll, gen, started, bytes.Clone(buf.Bytes()[:tagged]), bytes.Clone(res.Position), tag)
	s.env.SendTyped(w, r, http.StatusOK, buf, tagged, tag, envelope.CacheKeyed, envelope.ContentTypeJSON)
}
