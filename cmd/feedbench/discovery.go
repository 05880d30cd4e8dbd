package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// discovery asks the running service, before the attacks, for the values
// the scenarios need: a real source label, post and brief ids, a deep
// cursor, the ETF date range. Scenarios are prepared one after the other, so
// it needs no locking; what several scenarios share is fetched once.
type discovery struct {
	client     *http.Client
	base       *url.URL
	header     http.Header // Authorization, shared read-only by every GET target
	jsonHeader http.Header // the same plus Content-Type for GraphQL
	opts       scenarioOptions
	now        func() time.Time

	curatedSources []string
	rareCoins      map[string]string // list → the discovered rare ticker
	newestPosts    lazy[[]postItem]
	flowDate       lazy[time.Time]
	notes          []string
}

// postItem is the part of a post that discovery reads.
type postItem struct {
	ID     int64  `json:"id"`
	Source string `json:"source"`
}

// lazy memoises one discovery request.
type lazy[T any] struct {
	done bool
	v    T
	err  error
}

func (l *lazy[T]) get(f func() (T, error)) (T, error) {
	if !l.done {
		l.v, l.err = f()
		l.done = true
	}
	return l.v, l.err
}

func newDiscovery(client *http.Client, base *url.URL, key string, opts scenarioOptions) *discovery {
	h := http.Header{"Authorization": {"Bearer " + key}}
	jh := h.Clone()
	jh.Set("Content-Type", "application/json")
	return &discovery{client: client, base: base, header: h, jsonHeader: jh, opts: opts, now: time.Now}
}

// notef records a discovered parameter for the report.
func (d *discovery) notef(format string, args ...any) {
	d.notes = append(d.notes, fmt.Sprintf(format, args...))
}

// url returns the absolute URL of path with query q under the service root.
func (d *discovery) url(path string, q url.Values) string {
	u := *d.base
	u.Path = strings.TrimSuffix(u.Path, "/") + path
	u.RawQuery = q.Encode()
	return u.String()
}

// get returns a keyed GET target.
func (d *discovery) get(path string, q url.Values) vegeta.Target {
	return vegeta.Target{Method: http.MethodGet, URL: d.url(path, q), Header: d.header}
}

// statusError is a discovery request answered with something other than 200.
type statusError struct {
	what string // "GET /v1/briefs"
	code int
	text string // the error envelope's code and message, or the start of the body
}

func (e *statusError) Error() string {
	return fmt.Sprintf("%s: HTTP %d %s", e.what, e.code, e.text)
}

// preflight checks that the service answers and accepts the key, and reads
// the curated sources. Every scenario needs it, so it runs first.
func (d *discovery) preflight(ctx context.Context) error {
	var src struct {
		CuratedSources []string `json:"curated_sources"`
	}
	err := d.getJSON(ctx, "/v1/sources", nil, &src)
	var se *statusError
	switch {
	case errors.As(err, &se) && se.code == http.StatusUnauthorized:
		return fmt.Errorf("the service rejected the key (%w): pass a valid key with --key or FEEDBENCH_KEY", err)
	case errors.As(err, &se) && se.code == http.StatusTooManyRequests:
		return fmt.Errorf("rate limited before the first attack (%w): start the server with FEEDAPI_RATE_LIMIT=100000000", err)
	case err != nil:
		return fmt.Errorf("preflight: %w", err)
	}
	d.curatedSources = src.CuratedSources
	return nil
}

// firehoseOldest is the oldest created_at the firehose keeps
// (sources.firehose_oldest).
func (d *discovery) firehoseOldest(ctx context.Context) (time.Time, error) {
	var sources struct {
		Oldest *time.Time `json:"firehose_oldest"`
	}
	if err := d.getJSON(ctx, "/v1/sources", nil, &sources); err != nil {
		return time.Time{}, err
	}
	if sources.Oldest == nil {
		return time.Time{}, skip("no firehose messages")
	}
	return *sources.Oldest, nil
}

// getJSON sends a keyed GET and decodes the envelope's data into out.
func (d *discovery) getJSON(ctx context.Context, path string, q url.Values, out any) error {
	var env struct {
		Data json.RawMessage `json:"data"`
	}
	if err := d.do(ctx, http.MethodGet, path, q, nil, &env); err != nil {
		return err
	}
	if err := json.Unmarshal(env.Data, out); err != nil {
		return fmt.Errorf("GET %s: decode data: %w", path, err)
	}
	return nil
}

// graphql runs query on /graphql and decodes its data into out (when not
// nil). A key below the internal tier gives a *skipError.
func (d *discovery) graphql(ctx context.Context, query string, out any) error {
	body, err := json.Marshal(map[string]string{"query": query})
	if err != nil {
		return fmt.Errorf("encode GraphQL request: %w", err)
	}
	var resp struct {
		Data   json.RawMessage `json:"data"`
		Errors []struct {
			Message    string `json:"message"`
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		} `json:"errors"`
	}
	err = d.do(ctx, http.MethodPost, "/graphql", nil, body, &resp)
	var se *statusError
	switch {
	case errors.As(err, &se) && se.code == http.StatusForbidden:
		return skip("needs an internal-tier key (/graphql answered 403)")
	case errors.As(err, &se) && se.code == http.StatusNotFound:
		return skip("the service has no /graphql")
	case err != nil:
		return err
	}
	if len(resp.Errors) > 0 {
		if resp.Errors[0].Extensions.Code == "forbidden_tier" {
			return skip("needs an internal-tier key (/graphql answered forbidden_tier)")
		}
		return fmt.Errorf("POST /graphql: %s (%s)", resp.Errors[0].Message, resp.Errors[0].Extensions.Code)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.Data, out); err != nil {
		return fmt.Errorf("POST /graphql: decode data: %w", err)
	}
	return nil
}

// do sends one keyed request and decodes a 200 answer into out.
func (d *discovery) do(ctx context.Context, method, path string, q url.Values, body []byte, out any) error {
	what := method + " " + path
	h := d.header
	if body != nil {
		h = d.jsonHeader
	}
	req, err := http.NewRequestWithContext(ctx, method, d.url(path, q), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	req.Header = h.Clone()
	resp, err := d.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s: read body: %w", what, err)
	}
	if resp.StatusCode != http.StatusOK {
		return &statusError{what: what, code: resp.StatusCode, text: errorText(b)}
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("%s: decode: %w", what, err)
	}
	return nil
}

// errorText describes an error answer: the envelope's code and message when
// it has one, else the start of the body.
func errorText(body []byte) string {
	var env struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	if json.Unmarshal(body, &env) == nil && env.Error.Code != "" {
		return env.Error.Code + ": " + env.Error.Message
	}
	const max = 200
	if len(body) > max {
		body = body[:max]
	}
	return strings.TrimSpace(string(body))
}

// fetchNewestPosts reads the first page of 100 posts.
func (d *discovery) fetchNewestPosts(ctx context.Context) ([]postItem, error) {
	var posts []postItem
	err := d.getJSON(ctx, "/v1/posts", url.Values{"limit": {"100"}, "include_body": {"false"}}, &posts)
	return posts, err
}

// midVolumeSource picks a curated source of middling volume: the curated
// sources seen on the newest 100 posts, ranked by count, and the middle one.
// Without posts it takes the middle of the sorted curated list.
func (d *discovery) midVolumeSource(ctx context.Context) (string, error) {
	if len(d.curatedSources) == 0 {
		return "", skip("/v1/sources lists no curated sources")
	}
	posts, err := d.newestPosts.get(func() ([]postItem, error) { return d.fetchNewestPosts(ctx) })
	if err != nil {
		return "", err
	}
	counts := map[string]int{}
	for _, p := range posts {
		if slices.Contains(d.curatedSources, p.Source) {
			counts[p.Source]++
		}
	}
	ranked := rank(counts)
	if len(ranked) == 0 {
		ranked = d.curatedSources
	}
	return ranked[len(ranked)/2], nil
}

// newestFlowDate is the latest flow_date of /v1/etf-flows/latest; a
// deployment without ETF flows gives a *skipError.
func (d *discovery) newestFlowDate(ctx context.Context) (time.Time, error) {
	return d.flowDate.get(func() (time.Time, error) {
		var latest []struct {
			FlowDate string `json:"flow_date"`
		}
		err := d.getJSON(ctx, "/v1/etf-flows/latest", nil, &latest)
		var se *statusError
		if errors.As(err, &se) && se.code == http.StatusNotFound {
			return time.Time{}, skip("the deployment offers no ETF flows")
		}
		if err != nil {
			return time.Time{}, err
		}
		var newest time.Time
		for _, l := range latest {
			t, err := time.Parse(time.DateOnly, l.FlowDate)
			if err != nil {
				return time.Time{}, fmt.Errorf("GET /v1/etf-flows/latest: flow_date: %w", err)
			}
			if t.After(newest) {
				newest = t
			}
		}
		if newest.IsZero() {
			return time.Time{}, skip("no ETF flows loaded")
		}
		return newest, nil
	})
}
