package rest

import (
	"net/http"
	"strconv"
	"time"

	"github.com/feedapi/feedapi/rest/contract"
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
