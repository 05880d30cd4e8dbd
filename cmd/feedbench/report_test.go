package main

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// TestPercentiles feeds latencies of 1 to 100 ms in random order: the
// quantiles come from vegeta's t-digest, so they may be interpolated by a
// fraction of a step; the maximum is exact.
func TestPercentiles(t *testing.T) {
	c := newCollector()
	start := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	var end time.Time // of the last answer
	for i, ms := range rand.New(rand.NewPCG(1, 2)).Perm(100) {
		r := &vegeta.Result{Code: 200, Timestamp: start.Add(time.Duration(i) * 10 * time.Millisecond),
			Latency: time.Duration(ms+1) * time.Millisecond}
		c.add(r, outcome(r, false))
		if r.End().After(end) {
			end = r.End()
		}
	}
	row := c.row("x", "closed 1w")
	for name, tc := range map[string]struct{ got, want float64 }{
		"p50": {row.P50, 50}, "p95": {row.P95, 95}, "p99": {row.P99, 99}, "max": {row.Max, 100},
	} {
		if math.Abs(tc.got-tc.want) > 1 {
			t.Errorf("%s: got %.3f ms, want %.0f ± 1", name, tc.got, tc.want)
		}
	}
	if got, want := row.Max, 100.0; got != want {
		t.Errorf("max: got %v ms, want exactly %v", got, want)
	}
	if got, want := row.Requests, uint64(100); got != want {
		t.Errorf("requests: got %d, want %d", got, want)
	}
	// Answered requests over the time from the first request sent to the last answer received.
	if got, want := row.RPS, 100/end.Sub(start).Seconds(); math.Abs(got-want) > 1e-9 {
		t.Errorf("req/s: got %.3f, want %.3f", got, want)
	}
}

func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		name    string
		r       vegeta.Result
		graphql bool
		want    string
	}{
		{"ok", vegeta.Result{Code: 200}, false, "200"},
		{"rate limited", vegeta.Result{Code: 429, Error: "429 Too Many Requests"}, false, "429"},
		{"timeout", vegeta.Result{Error: `Get "http://127.0.0.1:1/v1/posts": context deadline exceeded (Client.Timeout exceeded while awaiting headers)`}, false, outcomeTimeout},
		{"refused", vegeta.Result{Error: "dial tcp 127.0.0.1:1: connect: connection refused"}, false, outcomeNetErr},
		{"graphql errors", vegeta.Result{Code: 200, Body: []byte(`{"errors":[{"message":"too complex"}],"data":null}`)}, true, outcomeGQLErr},
		{"graphql data", vegeta.Result{Code: 200, Body: []byte(`{"data":{"briefs":{"nodes":[{"id":1}]}}}`)}, true, "200"},
		{"graphql 403", vegeta.Result{Code: 403, Body: []byte(`{"errors":[]}`)}, true, "403"},
		{"rest body mentioning errors", vegeta.Result{Code: 200, Body: []byte(`{"data":[{"body":"\"errors\": none"}]}`)}, true, "200"},
	} {
		if got := outcome(&tc.r, tc.graphql); got != tc.want {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestFormatCodes(t *testing.T) {
	got := formatCodes(map[string]int{"429": 12, outcomeTimeout: 1, "200": 3000, "404": 2, outcomeGQLErr: 4})
	if want := "200:3000 404:2 429:12 gqlerr:4 timeout:1"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := formatCodes(nil); got != "" {
		t.Errorf("no answers: got %q, want empty", got)
	}
}
