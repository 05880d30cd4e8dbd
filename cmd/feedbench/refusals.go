package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// refusalBench is the refused-websocket scenario: it opens websockets to
// /graphql and sends each a connection_init with a made-up key, which the
// server must refuse with a close frame and forget at once. It reports the
// close codes, how long the refusals took, and the server's descriptors
// (with --pid) and goroutines (with --admin-url) before, at the end and a
// moment after: a refusal that leaks shows as their growth. Run it beside a
// feedbench of a real client's scenario to see what the refusals cost that
// client.
type refusalBench struct {
	base        *url.URL
	adminURL    string
	pid         int
	n, parallel int
	stdout      io.Writer
}

// madeUpKey is well formed and issued to nobody.
const madeUpKey = "fapi_refusedrefusedrefusedrefusedrefused"

func (b *refusalBench) run(ctx context.Context) error {
	sb := &streamBench{adminURL: b.adminURL}
	count := func() (fds, goroutines int) {
		fds, goroutines = -1, -1
		if b.pid > 0 {
			if entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", b.pid)); err == nil {
				fds = len(entries)
			}
		}
		if b.adminURL != "" {
			if g, err := sb.goroutines(ctx); err == nil {
				goroutines = g
			}
		}
		return fds, goroutines
	}
	fds0, g0 := count()
	u := *b.base
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	target := u.JoinPath("/graphql").String()
	codes := map[string]int{}
	var mu sync.Mutex
	var durations []time.Duration
	work := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for range max(b.parallel, 1) {
		wg.Go(func() {
			for range work {
				t := time.Now()
				code := refuseOnce(ctx, target)
				d := time.Since(t)
				mu.Lock()
				codes[code]++
				durations = append(durations, d)
				mu.Unlock()
			}
		})
	}
	for range b.n {
		if ctx.Err() != nil {
			break
		}
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	took := time.Since(start)
	fds1, g1 := count()
	// The server's side of the last sockets closes after their close
	// handshake: look again a moment later.
	time.Sleep(2 * time.Second)
	fds2, g2 := count()
	sort.Slice(durations, func(i, j int) bool { return durations[i] < durations[j] })
	q := func(p float64) time.Duration {
		if len(durations) == 0 {
			return 0
		}
		return durations[min(len(durations)-1, int(p*float64(len(durations))))].Round(10 * time.Microsecond)
	}
	fmt.Fprintf(b.stdout, "%d refused websocket inits (%d at a time) in %s: p50 %s, p99 %s; close codes %v\n",
		len(durations), max(b.parallel, 1), took.Round(time.Millisecond), q(0.5), q(0.99), codes)
	fmt.Fprintf(b.stdout, "server descriptors before/after/+2s: %d/%d/%d; goroutines: %d/%d/%d (-1: not measured)\n",
		fds0, fds1, fds2, g0, g1, g2)
	return nil
}

// refuseOnce opens one websocket, sends a connection_init with a made-up
// key, and returns how the server refused it: "close 4401" (the close
// code), "http 429" (refused before the upgrade, when the client's
// failed authentications are spent) or "error" (anything else).
func refuseOnce(ctx context.Context, target string) string {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ws, res, err := websocket.Dial(ctx, target, &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		if res != nil {
			return fmt.Sprintf("http %d", res.StatusCode)
		}
		return "error"
	}
	defer ws.CloseNow() //nolint:errcheck
	msg := `{"type":"connection_init","payload":{"Authorization":"Bearer ` + madeUpKey + `"}}`
	if err := ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return "error"
	}
	for {
		if _, _, err := ws.Read(ctx); err != nil {
			var ce websocket.CloseError
			if errors.As(err, &ce) {
				return fmt.Sprintf("close %d", ce.Code)
			}
			return "error"
		}
	}
}
