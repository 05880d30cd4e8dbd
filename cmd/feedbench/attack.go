package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

const (
	// attackName is sent as vegeta's X-Vegeta-Attack header, so that server
	// logs (and the tests' fake server) can tell load from discovery.
	attackName = "feedbench"
	// bodyPrefix is how much of each answer the attacker keeps (the rest is
	// read and discarded, so connections are reused): enough to see GraphQL
	// errors without holding every page in memory.
	bodyPrefix = 512
	// mixTotal is the scenario name of a mix's total row.
	mixTotal = "mix (total)"
)

// load says how hard and how long to press the service.
type load struct {
	rate        int           // open loop: requests per second; 0 for the closed loop
	workers     int           // closed loop: concurrent workers
	maxWorkers  int           // open loop: cap on requests in flight
	duration    time.Duration // per attack
	maxRequests uint64        // per attack; 0: no cap
	timeout     time.Duration // per request
	mix         bool          // all scenarios interleaved in one attack
}

// mode names the load for the report: "open 200/s" or "closed 64w",
// prefixed by "mix " in a mix.
func (l load) mode() string {
	m := fmt.Sprintf("closed %dw", l.workers)
	if l.rate > 0 {
		m = fmt.Sprintf("open %d/s", l.rate)
	}
	if l.mix {
		m = "mix " + m
	}
	return m
}

// pacer is vegeta's constant pacer at --rate; at rate 0 (the closed loop) it
// never waits, so the fixed pool of workers sets the pace. --max-requests
// caps it.
func (l load) pacer() vegeta.Pacer {
	var p vegeta.Pacer = vegeta.ConstantPacer{Freq: l.rate, Per: time.Second}
	if l.maxRequests > 0 {
		p = capped{Pacer: p, max: l.maxRequests}
	}
	return p
}

// options are the attacker's options: the shared client, no redirects, the
// per-request timeout, and the workers. In the closed loop the pool is fixed
// (workers = max workers), so each worker sends its next request when its
// previous one is answered; in the open loop vegeta adds workers up to
// maxWorkers to keep the rate when answers are slow.
func (l load) options(client *http.Client) []func(*vegeta.Attacker) {
	opts := []func(*vegeta.Attacker){
		vegeta.Client(client), // first: it replaces the whole client
		vegeta.Redirects(vegeta.NoFollow),
		vegeta.Timeout(l.timeout),
		vegeta.MaxBody(bodyPrefix),
	}
	if l.rate > 0 {
		return append(opts, vegeta.Workers(uint64(min(64, l.maxWorkers))), vegeta.MaxWorkers(uint64(l.maxWorkers)))
	}
	return append(opts, vegeta.Workers(uint64(l.workers)), vegeta.MaxWorkers(uint64(l.workers)))
}

// capped stops its pacer after max hits.
type capped struct {
	vegeta.Pacer
	max uint64
}

// Pace implements vegeta.Pacer.
func (c capped) Pace(elapsed time.Duration, hits uint64) (time.Duration, bool) {
	if hits >= c.max {
		return 0, true
	}
	return c.Pacer.Pace(elapsed, hits)
}

// prepared is a scenario ready to attack.
type prepared struct {
	*scenario
	next nextFunc
}

// attack runs one vegeta attack over plans, interleaved round-robin when
// there are several, until l's duration or request cap or until ctx ends. It
// returns a collector per plan and, in a mix, one for all.
//
// Each target's URL carries its scenario's name as a fragment, which is
// never sent to the server but comes back in vegeta's Result.URL: that is how
// results are attributed to scenarios, failed ones included.
func attack(ctx context.Context, client *http.Client, l load, plans []prepared) (per []*collector, total *collector) {
	atk := vegeta.NewAttacker(l.options(client)...)
	defer context.AfterFunc(ctx, func() { atk.Stop() })()

	index := make(map[string]int, len(plans))
	per = make([]*collector, len(plans))
	for i, p := range plans {
		index[p.name] = i
		per[i] = newCollector()
	}
	if l.mix {
		total = newCollector()
	}

	var n atomic.Uint64
	targeter := func(t *vegeta.Target) error {
		p := &plans[(n.Add(1)-1)%uint64(len(plans))]
		p.next(t)
		t.URL += "#" + p.name
		return nil
	}
	for r := range atk.Attack(targeter, l.pacer(), l.duration, attackName) {
		_, tag, _ := strings.Cut(r.URL, "#")
		i, ok := index[tag]
		if !ok { // cannot happen: every target is tagged
			continue
		}
		o := outcome(r, plans[i].graphql)
		per[i].add(r, o)
		if total != nil {
			total.add(r, o)
		}
	}
	return per, total
}

// measure runs one attack over plans, sampling the server's memory when pid
// is set, and returns the report rows: one for a single scenario, or for a
// mix one per scenario plus the total. A failure to read the server's memory
// during the attack is returned as a note.
func measure(ctx context.Context, client *http.Client, l load, plans []prepared, pid int, interval time.Duration, progress io.Writer) (rows []row, note string, err error) {
	names := make([]string, len(plans))
	for i, p := range plans {
		names[i] = p.name
	}
	mode := l.mode()
	fmt.Fprintf(progress, "feedbench: %s: %s for %s…\n", strings.Join(names, ", "), mode, l.duration)

	var sampler *rssSampler
	if pid > 0 {
		if sampler, err = startRSS(pid, interval); err != nil {
			return nil, "", err
		}
	}
	per, total := attack(ctx, client, l, plans)
	var mem memory
	if sampler != nil {
		if mem, err = sampler.Stop(); err != nil {
			note = fmt.Sprintf("%s: server memory: %v", strings.Join(names, ", "), err)
		}
	}

	for i, p := range plans {
		rows = append(rows, per[i].row(p.name, mode))
	}
	if total != nil {
		rows = append(rows, total.row(mixTotal, mode))
	}
	last := &rows[len(rows)-1] // the scenario's row, or the mix's total
	last.PeakRSS, last.HWM = mem.RSS, mem.HWM
	fmt.Fprintf(progress, "feedbench:   %d requests, %.1f/s, p99 %.2f ms, %s\n", last.Requests, last.RPS, last.P99, formatCodes(last.Codes))
	return rows, note, nil
}
