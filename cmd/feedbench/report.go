package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// Outcome labels besides HTTP status codes.
const (
	outcomeTimeout = "timeout" // no answer within --timeout
	outcomeNetErr  = "neterr"  // connection refused, reset, …
	outcomeGQLErr  = "gqlerr"  // a GraphQL 200 whose body carries "errors"
)

// rateLimitHint is the first note of every report: with the default limit
// a load test measures mostly 429s.
const rateLimitHint = "the server should run with FEEDAPI_RATE_LIMIT=100000000 (or similar) for benchmarking; 429 answers are counted apart"

// outcome classifies one result: its status code, or a label for failures
// that have none, or gqlerr for a GraphQL answer with errors.
func outcome(r *vegeta.Result, graphql bool) string {
	switch {
	case r.Code == 0 && (strings.Contains(r.Error, "Client.Timeout") || strings.Contains(r.Error, "deadline exceeded")):
		return outcomeTimeout
	case r.Code == 0:
		return outcomeNetErr
	case graphql && r.Code == 200 && hasGraphQLErrors(r.Body):
		return outcomeGQLErr
	}
	return strconv.Itoa(int(r.Code))
}

// hasGraphQLErrors reports whether a GraphQL answer, of which the attacker
// keeps the first bodyPrefix bytes, has an "errors" member. gqlgen writes it
// first; inside JSON strings the quotes would be escaped, so a match is a key.
func hasGraphQLErrors(body []byte) bool {
	return bytes.Contains(body, []byte(`"errors":`))
}

// collector aggregates the results of one scenario (or of a whole mix):
// vegeta's Metrics for counts and latency quantiles, and counts by outcome.
type collector struct {
	m     vegeta.Metrics
	codes map[string]int
}

func newCollector() *collector { return &collector{codes: map[string]int{}} }

func (c *collector) add(r *vegeta.Result, outcome string) {
	c.m.Add(r)
	c.codes[outcome]++
}

// row closes the metrics and returns the report row.
func (c *collector) row(scenario, mode string) row {
	c.m.Close()
	r := row{
		Scenario: scenario,
		Mode:     mode,
		Requests: c.m.Requests,
		P50:      millis(c.m.Latencies.P50),
		P95:      millis(c.m.Latencies.P95),
		P99:      millis(c.m.Latencies.P99),
		Max:      millis(c.m.Latencies.Max),
		Codes:    c.codes,
	}
	if span := c.m.End.Sub(c.m.Earliest); span > 0 {
		r.RPS = float64(c.m.Requests) / span.Seconds()
	}
	return r
}

// millis converts a latency to fractional milliseconds, to the microsecond.
func millis(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Millisecond)
}

// row is one line of the report.
type row struct {
	Scenario string `json:"scenario"`
	// Mode is "open 200/s", "closed 64w", prefixed by "mix " in a mix.
	Mode     string `json:"mode"`
	Requests uint64 `json:"requests"`
	// RPS is answered requests per second over the attack's wall time, from
	// the first request sent to the last answer received.
	RPS float64 `json:"requests_per_second"`
	P50 float64 `json:"p50_ms"`
	P95 float64 `json:"p95_ms"`
	P99 float64 `json:"p99_ms"`
	Max float64 `json:"max_ms"`
	// Codes counts answers by status code, plus timeout, neterr and gqlerr.
	Codes map[string]int `json:"codes"`
	// PeakRSS is the highest VmRSS sampled during the attack (with --pid);
	// per-scenario rows of a mix have none, the mix's total row has it.
	PeakRSS int64 `json:"peak_rss_bytes,omitempty"`
	// HWM is VmHWM after the attack: the peak of the server's whole life.
	HWM int64 `json:"vm_hwm_bytes,omitempty"`
}

// skipped is a selected scenario that did not run, and why.
type skipped struct {
	Scenario string `json:"scenario"`
	Reason   string `json:"reason"`
}

// report is the whole output of a run.
type report struct {
	URL         string    `json:"url"`
	Started     time.Time `json:"started"`
	Mode        string    `json:"mode"`
	Duration    string    `json:"duration"`
	MaxRequests uint64    `json:"max_requests,omitempty"`
	Rows        []row     `json:"rows"`
	Skipped     []skipped `json:"skipped"`
	// Notes are the rate-limit hint, the parameters discovery chose, and
	// warnings (429s, failed memory readings).
	Notes       []string `json:"notes"`
	Interrupted bool     `json:"interrupted,omitempty"`
}

// rateLimited counts the 429 answers over the scenario rows (a mix's total
// row is not added again).
func (r *report) rateLimited() int {
	n := 0
	for _, row := range r.Rows {
		if row.Scenario != mixTotal {
			n += row.Codes["429"]
		}
	}
	return n
}

// finish adds the closing notes: the 429 warning.
func (r *report) finish() {
	if n := r.rateLimited(); n > 0 {
		r.Notes = append(r.Notes, fmt.Sprintf("%d answers were 429 rate_limited: the key's rate limit, not the server's capacity; raise FEEDAPI_RATE_LIMIT", n))
	}
}

// formatCodes writes outcome counts as "200:3000 429:12": status codes in
// numeric order, then the labels.
func formatCodes(codes map[string]int) string {
	keys := make([]string, 0, len(codes))
	for k := range codes {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		na, errA := strconv.Atoi(a)
		nb, errB := strconv.Atoi(b)
		switch {
		case errA == nil && errB == nil:
			return cmp.Compare(na, nb)
		case errA == nil:
			return -1
		case errB == nil:
			return 1
		}
		return cmp.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + ":" + strconv.Itoa(codes[k])
	}
	return strings.Join(parts, " ")
}

// formatBytes writes a memory size in MiB, or "-" when unknown.
func formatBytes(n int64) string {
	if n <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// cells returns a row's table cells, in the order of tableHeader.
func (r row) cells() []string {
	ms := func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }
	return []string{r.Scenario, r.Mode, strconv.FormatUint(r.Requests, 10), strconv.FormatFloat(r.RPS, 'f', 1, 64),
		ms(r.P50), ms(r.P95), ms(r.P99), ms(r.Max), formatCodes(r.Codes), formatBytes(r.PeakRSS)}
}

var tableHeader = []string{"scenario", "mode", "requests", "req/s", "p50 ms", "p95 ms", "p99 ms", "max ms", "codes", "peak RSS"}

// summary is the line above the table.
func (r *report) summary() string {
	s := fmt.Sprintf("feedbench %s: %s, %s per attack", r.URL, r.Mode, r.Duration)
	if r.MaxRequests > 0 {
		s += fmt.Sprintf(" or %d requests", r.MaxRequests)
	}
	if r.Interrupted {
		s += " (interrupted)"
	}
	return s
}

// writeText writes the report as an aligned table for a terminal.
func (r *report) writeText(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintln(&b, r.summary())
	tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(tableHeader, "\t")))
	for _, row := range r.Rows {
		fmt.Fprintln(tw, strings.Join(row.cells(), "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "skipped %s: %s\n", s.Scenario, s.Reason)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(&b, "note:", n)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeMarkdown writes the report as a Markdown table, for the figures in
// cmd/feedbench/README.md.
func (r *report) writeMarkdown(w io.Writer) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s (started %s).\n\n", r.summary(), r.Started.UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "| %s |\n", strings.Join(tableHeader, " | "))
	align := []string{"---", "---", "--:", "--:", "--:", "--:", "--:", "--:", "---", "--:"}
	fmt.Fprintf(&b, "|%s|\n", strings.Join(align, "|"))
	for _, row := range r.Rows {
		cells := row.cells()
		cells[0] = "`" + cells[0] + "`"
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cells, " | "))
	}
	if len(r.Skipped) > 0 || len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(&b, "- skipped `%s`: %s\n", s.Scenario, s.Reason)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "- %s\n", n)
	}
	_, err := w.Write(b.Bytes())
	return err
}

// writeJSON writes the report as one indented JSON object.
func (r *report) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
