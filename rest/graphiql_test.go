package rest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/live"
)

// TestGraphiQLIsSelfContained checks that every script and stylesheet the
// page loads comes from the API itself (no CDN: the page works offline),
// with the right content type and caching, and that the page tells its user
// where the key is kept.
func TestGraphiQLIsSelfContained(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	page := a.get(t, "/graphql", "", "Accept", "text/html")
	page.wantStatus(t, http.StatusOK)
	body := string(page.plain)
	if strings.Contains(body, "//") && regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(body) {
		t.Errorf("the page loads something from another host:\n%s", body)
	}
	if !strings.Contains(body, "not written to\n  the browser's storage") {
		t.Error("the page does not say that the key is not kept in the browser")
	}
	refs := regexp.MustCompile(`(?:src|href)="(/graphql/assets/[^"]+)"`).FindAllStringSubmatch(body, -1)
	if len(refs) < 6 {
		t.Fatalf("the page references %d assets, want the 6 scripts and stylesheets: %q", len(refs), refs)
	}
	for _, ref := range refs {
		r, err := client.Get(a.srv.URL + ref[1])
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		wantType := "text/javascript; charset=utf-8"
		if strings.HasSuffix(ref[1], ".css") {
			wantType = "text/css; charset=utf-8"
		}
		if r.StatusCode != http.StatusOK || r.Header.Get("Content-Type") != wantType || r.ContentLength < 100 {
			t.Errorf("%s: %d %q, %d bytes; want 200 %q", ref[1], r.StatusCode, r.Header.Get("Content-Type"), r.ContentLength, wantType)
		}
		if cc := r.Header.Get("Cache-Control"); cc == "" {
			t.Errorf("%s: no Cache-Control", ref[1])
		}
		again := a.get(t, ref[1], "", "If-None-Match", r.Header.Get("Etag"))
		if r.Header.Get("Etag") == "" || again.StatusCode != http.StatusNotModified {
			t.Errorf("%s: ETag %q, revalidation %d; want a strong ETag and 304", ref[1], r.Header.Get("Etag"), again.StatusCode)
		}
	}
	missing := a.get(t, "/graphql/assets/graphiql-0.0.0.min.js", "")
	missing.wantStatus(t, http.StatusNotFound)
	if missing.env.Error == nil || missing.env.Error.Code != "not_found" {
		t.Errorf("unknown asset: %s, want the not_found envelope", missing.plain)
	}
}

// chromium finds a Chromium binary: $CHROMIUM, or Debian's chromium.
func chromium() string {
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// headlessChromium starts bin for t and returns its allocator and how long
// a page may take.
func headlessChromium(t *testing.T, bin string) (context.Context, time.Duration) {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancelAlloc)
	// Seconds, not a bound on speed: a cold Chromium on a busy machine is slow.
	timeout := 2 * time.Minute
	if d, ok := t.Deadline(); ok && time.Until(d) < timeout {
		timeout = time.Until(d) - 5*time.Second
	}
	return allocCtx, timeout
}

// browserTab opens a tab of a headless Chromium of its own for t, with the
// time a page may take.
func browserTab(t *testing.T, bin string) context.Context {
	allocCtx, timeout := headlessChromium(t, bin)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	// The first Run starts the tab; its context must not time out.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
	t.Cleanup(cancelTimeout)
	return ctx
}

// TestGraphiQLInABrowser opens the page in headless Chromium, as a user
// would: it enters an internal key and checks that GraphiQL renders and that
// its Docs pane lists the schema's Query type, with no "Re-fetch schema"
// step; and that a free key is refused on the key step with the API's message.
func TestGraphiQLInABrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium: install Debian's chromium (apt-get install chromium; .ci/run does) or set CHROMIUM")
	}
	t.Parallel()
	a := newAPI(t)
	allocCtx, timeout := headlessChromium(t, bin)

	tests := []struct {
		name, key string
		want      func(ctx context.Context) error
	}{
		{"an internal key opens GraphiQL with its docs", a.intern, func(ctx context.Context) error {
			if err := chromedp.Do(ctx,
				chromedp.WaitVisible(chromedp.CSS(".graphiql-container")),
				chromedp.Click(chromedp.CSS(`button[aria-label="Show Documentation Explorer"]`)),
				chromedp.WaitVisible(chromedp.CSS(".graphiql-doc-explorer-root-type")),
			); err != nil {
				return err
			}
			docs, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".graphiql-doc-explorer")))
			if err == nil && !strings.Contains(docs, "Query") {
				t.Errorf("the Docs pane shows %q, want the Query type", docs)
			}
			return err
		}},
		{"a free key is refused on the key step", a.free, func(ctx context.Context) error {
			if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.getElementById("key-error").textContent.includes("(403)")`)); err != nil {
				return err
			}
			msg, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("key-error")))
			if err == nil && !strings.Contains(msg, "internal") {
				t.Errorf("key step says %q, want the API's forbidden_tier message", msg)
			}
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := chromedp.NewContext(allocCtx)
			defer cancel()
			// The first Run starts the tab; its context must not time out.
			if err := chromedp.Do(ctx); err != nil {
				t.Fatalf("start Chromium: %v", err)
			}
			ctx, cancelTimeout := context.WithTimeout(ctx, timeout)
			defer cancelTimeout()
			err := chromedp.Do(ctx,
				chromedp.Navigate(a.srv.URL+"/graphql"),
				chromedp.WaitVisible(chromedp.ID("key")),
				chromedp.SendKeys(chromedp.ID("key"), tt.key),
				chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)),
			)
			if err == nil {
				err = tt.want(ctx)
			}
			if err != nil {
				html, _ := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("body")))
				t.Fatalf("%v; page:\n%.2000s", err, html)
			}
		})
	}
}

// TestGraphiQLRunsSubscriptions: the README's subscription example, run in
// GraphiQL in a real browser, shows the items written while it runs: the
// page gives GraphiQL the websocket's address and the key for its
// connection_init.
func TestGraphiQLRunsSubscriptions(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium: install Debian's chromium (apt-get install chromium; .ci/run does) or set CHROMIUM")
	}
	t.Parallel()
	hub := live.NewHub()
	a := newAPI(t, withLive(live.Config{Hub: hub}))
	ctx := browserTab(t, bin)
	const subscription = `subscription { firehoseMessageAdded(pane: crypto) { id source title createdAt } }`
	err := chromedp.Do(ctx,
		chromedp.Navigate(a.srv.URL+"/graphql"),
		chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), a.intern),
		chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".graphiql-query-editor .CodeMirror")),
		chromedp.Evaluate[chromedp.Void](`document.querySelector(".graphiql-query-editor .CodeMirror").CodeMirror.setValue(`+
			strconv.Quote(subscription)+`)`),
	)
	if err == nil {
		// GraphiQL parses an edit a moment later, and runs what it parsed
		// last; it stores the tab's query once it has.
		_, err = chromedp.Run(ctx, chromedp.Poll[bool](`localStorage.getItem("graphiql:query") === `+strconv.Quote(subscription)))
	}
	if err == nil {
		err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS(".graphiql-execute-button")))
	}
	if err != nil {
		t.Fatal(err)
	}
	// Written until the page shows one: the subscription starts at the end
	// of the stream as it is when its websocket has subscribed.
	shown := func() bool {
		text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(".graphiql-response")))
		return err == nil && strings.Contains(text, "9400")
	}
	for i := 0; !shown(); i++ {
		if ctx.Err() != nil {
			t.Fatal("no item in GraphiQL's response pane")
		}
		if _, err := a.bdb.ExecContext(ctx, `INSERT INTO firehose_messages (id, pane, source, title, important, created_at)
			VALUES (?, 'crypto', 'browser', 'live in GraphiQL', false, now())`, 9400000+i); err != nil {
			t.Fatal(err)
		}
		hub.Publish(live.KindFirehose)
		time.Sleep(200 * time.Millisecond)
	}
}

// TestEventSourceInABrowser: the README's EventSource example, in headless
// Chromium behind a same-origin proxy that adds the key (a browser cannot
// send a bearer header on an EventSource): the page receives the posts
// written while it listens, and after the proxy cuts its connection it
// reconnects by itself with Last-Event-ID and receives what was written
// meanwhile, none twice.
func TestEventSourceInABrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium: install Debian's chromium (apt-get install chromium; .ci/run does) or set CHROMIUM")
	}
	t.Parallel()
	hub := live.NewHub()
	a := newAPI(t, withLive(live.Config{Hub: hub}))
	key := a.newKey(db.TierFree)
	target, _ := url.Parse(a.srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(target)
	const page = `<!doctype html><title>es</title><pre id="log"></pre><script>
const es = new EventSource("/v1/posts/stream?source=Browser");
es.addEventListener("post", (e) => { document.getElementById("log").textContent += JSON.parse(e.data).id + "\n"; });
</script>`
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			w.Header().Set("Content-Type", "text/html")
			_, _ = io.WriteString(w, page)
			return
		}
		r.Header.Set("Authorization", "Bearer "+key)
		proxy.ServeHTTP(w, r)
	}))
	// Closed after the browser (cleanups run last first): Close waits for
	// the browser's stream to end.
	t.Cleanup(front.Close)

	ctx := browserTab(t, bin)
	if err := chromedp.Do(ctx, chromedp.Navigate(front.URL+"/")); err != nil {
		t.Fatal(err)
	}
	shown := func(id int64) error {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf(`document.getElementById("log").textContent.includes("%d")`, id)))
		return err
	}
	write := func(id int64) {
		if _, err := a.bdb.ExecContext(ctx, `INSERT INTO posts (id, source, username, body, created_at) VALUES (?, 'Browser', 'b', 'b', now())`, id); err != nil {
			t.Fatal(err)
		}
		hub.Publish(live.KindPosts)
	}
	// Written until the page shows one: the stream starts at the end of
	// the posts as they are when it opens.
	id := int64(9_500_000)
	for ; ; id++ {
		write(id)
		sctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
		_, err := chromedp.Run(sctx, chromedp.Poll[bool](fmt.Sprintf(`document.getElementById("log").textContent.includes("%d")`, id)))
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("the page shows no post")
		}
	}
	// The proxy's connection to the browser is cut; posts written while
	// the page reconnects reach it once it has.
	front.CloseClientConnections()
	write(id + 1)
	write(id + 2)
	if err := shown(id + 2); err != nil {
		t.Fatalf("after the cut: %v", err)
	}
	log, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("log")))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(log)
	if last := lines[len(lines)-3:]; !slices.Equal(last, []string{fmt.Sprint(id), fmt.Sprint(id + 1), fmt.Sprint(id + 2)}) {
		t.Errorf("the page's last posts %v, want %d, %d, %d once each, in order", last, id, id+1, id+2)
	}
}
