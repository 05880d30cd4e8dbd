package rest

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/graph/live"
	"github.com/feedapi/feedapi/rest/auth"
)

var dashboardShot = flag.String("dashboard-screenshot", "", "write a screenshot of the dashboard at a laptop's width to this PNG file")

// TestDashboardIsSelfContained checks that the dashboard page loads every
// script and stylesheet from the API itself (no CDN: it works offline),
// with types and validators, that it says where the key is kept, and that
// without ETF flows it has no ETF panel.
func TestDashboardIsSelfContained(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	page := a.get(t, "/dashboard", "")
	page.wantStatus(t, http.StatusOK)
	if ct := page.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	body := string(page.plain)
	if regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(body) {
		t.Errorf("the page loads something from another host:\n%s", body)
	}
	if !strings.Contains(body, "not written to\n  the browser's storage") || !strings.Contains(body, `id="etf"`) {
		t.Error("the page does not say that the key is not kept in the browser, or has no ETF panel")
	}
	refs := regexp.MustCompile(`(?:src|href)="(/dashboard/assets/[^"]+)"`).FindAllStringSubmatch(body, -1)
	if len(refs) != 5 {
		t.Fatalf("the page references %d assets, want its 5 scripts and stylesheets: %q", len(refs), refs)
	}
	for _, ref := range refs {
		r := a.get(t, ref[1], "")
		r.wantStatus(t, http.StatusOK)
		wantType := "text/javascript; charset=utf-8"
		if strings.HasSuffix(ref[1], ".css") {
			wantType = "text/css; charset=utf-8"
		}
		if r.Header.Get("Content-Type") != wantType || len(r.plain) < 1000 || r.Header.Get("Cache-Control") == "" {
			t.Errorf("%s: %q, %d bytes, Cache-Control %q", ref[1], r.Header.Get("Content-Type"), len(r.plain), r.Header.Get("Cache-Control"))
		}
		if again := a.get(t, ref[1], "", "If-None-Match", r.Header.Get("Etag")); again.StatusCode != http.StatusNotModified {
			t.Errorf("%s: revalidation %d, want 304", ref[1], again.StatusCode)
		}
	}
	missing := a.get(t, "/dashboard/assets/uPlot-0.0.0.min.js", "")
	missing.wantStatus(t, http.StatusNotFound)
	if post := a.do(t, http.MethodPost, "/dashboard", "", nil); post.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /dashboard: %d, want 405", post.StatusCode)
	}

	noETF := a.variant(t, func(c *Config) { c.ETFEnabled = false })
	p := noETF.get(t, "/dashboard", "")
	p.wantStatus(t, http.StatusOK)
	if strings.Contains(string(p.plain), `id="etf"`) || !strings.Contains(string(p.plain), `data-etf="false"`) {
		t.Error("without ETF flows the dashboard still has its ETF panel")
	}
}

// dashboardServer serves the API over its own database with the change
// signal fed by LISTEN, as `feedapi serve` does, so that subscriptions see
// what is imported.
func dashboardServer(t *testing.T) (srv *httptest.Server, store *db.Store, key, free string) {
	t.Helper()
	_, url := dbtest.NewWithURL(t)
	conn, err := db.Open(url, db.Options{MaxOpenConns: 8})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ks := keys.NewService(conn, keys.Options{})
	key, _, err = ks.Create(context.Background(), db.TierInternal, "dashboard")
	if err != nil {
		t.Fatal(err)
	}
	free, _, err = ks.Create(context.Background(), db.TierFree, "dashboard's checks")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	hub := live.NewHub()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = db.Listen(ctx, url+"&application_name=feedapi_dashboard_test", db.ListenOptions{MinBackoff: 10 * time.Millisecond}, hub.Resync, hub.Notice)
	}()
	h, err := New(Config{
		Graph: graph.Config{Store: db.NewStore(conn)}, Version: "test", ETFEnabled: true,
		Auth: auth.Config{Keys: ks, RateLimit: 100000, AuthFailureLimit: 100000}, Live: live.New(live.Config{Hub: hub}),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv = httptest.NewServer(h)
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close(); cancel(); <-done })
	return srv, db.NewStore(conn), key, free
}

// TestDashboardInABrowser opens the dashboard in headless Chromium as a
// person would: it enters an internal key, and checks that the ETF panel
// renders (the chart's canvas has drawn the asset's days, the cards show the
// summary's figures to the cent, the top funds are the summary's), that the
// asset switcher loads another asset, that a post imported while the page is
// open appears in the live panel (reporting how long after its commit), that
// nothing is written to the console, and that the page fits a laptop's and
// a phone's width.
func TestDashboardInABrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium: install Debian's chromium (apt-get install chromium; .ci/run does) or set CHROMIUM")
	}
	t.Parallel()
	srv, store, key, free := dashboardServer(t)
	ctx := context.Background()

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.WindowSize(1366, 900), chromedp.UserDataDir(t.TempDir()))
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	bctx, cancel := chromedp.NewContext(allocCtx)
	defer cancel()
	// The first Run starts the tab; its context must not time out.
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	var mu sync.Mutex
	var console []string
	if err := chromedp.Listen(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				console = append(console, string(e.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			console = append(console, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				console = append(console, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, enable := range []func() error{
		func() error { _, err := chromedp.Call(bctx, runtime.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(bctx, log.Enable, cdp.Empty{}); return err },
	} {
		if err := enable(); err != nil {
			t.Fatal(err)
		}
	}
	// Minutes, not a bound on speed: a cold Chromium on a busy machine is slow.
	timeout := 3 * time.Minute
	if d, ok := t.Deadline(); ok && time.Until(d) < timeout {
		timeout = time.Until(d) - 5*time.Second
	}
	bctx, cancelTimeout := context.WithTimeout(bctx, timeout)
	defer cancelTimeout()
	fail := func(step string, err error) {
		t.Helper()
		shown, _ := chromedp.Run(context.WithoutCancel(bctx), chromedp.Evaluate[string](
			`"status: " + document.getElementById("status").textContent + "\nlive: " + document.getElementById("live-list").innerText`))
		t.Fatalf("%s: %v; the page shows\n%.3000s", step, err, shown)
	}
	do := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, actions...); err != nil {
			fail(step, err)
		}
	}
	waitFor := func(step, expr string) {
		t.Helper()
		do(step, chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0)))
	}
	eval := func(step, expr string, out any) {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[json.RawMessage](expr))
		if err == nil {
			err = json.Unmarshal(v, out)
		}
		if err != nil {
			fail(step, err)
		}
	}

	do("open the page and enter the key",
		chromedp.Navigate(srv.URL+"/dashboard"),
		chromedp.WaitVisible(chromedp.ID("key")),
		chromedp.SendKeys(chromedp.ID("key"), key),
		chromedp.Click(chromedp.CSS(`#key-form button[type="submit"]`)),
	)
	waitFor("BTC loads", `document.body.getAttribute("data-etf-asset") === "BTC"`)
	waitFor("the live panel connects", `document.getElementById("live-state").getAttribute("data-state") === "live"`)
	waitFor("the live panel lists the newest items", `document.querySelectorAll("#live-list li.item").length > 5`)

	checkETF := func(asset db.Asset) {
		t.Helper()
		// The chart drew every day of the asset: its points, and pixels.
		var drawn struct{ Points, Inked int }
		eval("read the chart", `(() => {
			const c = document.querySelector("#chart canvas");
			const copy = document.createElement("canvas");
			copy.width = c.width;
			copy.height = c.height;
			const g = copy.getContext("2d", {willReadFrequently: true});
			g.drawImage(c, 0, 0);
			const px = g.getImageData(0, 0, c.width, c.height).data;
			let inked = 0;
			for (let i = 3; i < px.length; i += 4) if (px[i] > 0) inked++;
			return {points: Number(document.getElementById("chart").getAttribute("data-points")), inked};
		})()`, &drawn)
		days, err := store.DB().NewSelect().Table("etf_flows").Where("asset = ?", asset).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if int64(drawn.Points) != days || drawn.Inked < 5000 {
			t.Errorf("%s chart: %d points (want %d days), %d inked pixels", asset, drawn.Points, days, drawn.Inked)
		}
		// The cards' exact figures are the summary's, to the cent.
		var cards map[string]string
		eval("read the cards", `Object.fromEntries([...document.querySelectorAll("#cards .card")].map(
			c => [c.dataset.card, c.querySelector(".exact").getAttribute("data-value")]))`, &cards)
		// The summary as /v1 serves it, its numbers as the exact text.
		var served struct {
			Data struct {
				Assets []struct {
					NetInflow json.RawMessage `json:"net_inflow"`
					Last7d    struct {
						NetInflow json.RawMessage `json:"net_inflow"`
					} `json:"last_7d"`
					Last30d struct {
						NetInflow json.RawMessage `json:"net_inflow"`
					} `json:"last_30d"`
					MonthToDate struct {
						NetInflow json.RawMessage `json:"net_inflow"`
					} `json:"month_to_date"`
					YearToDate struct {
						NetInflow json.RawMessage `json:"net_inflow"`
					} `json:"year_to_date"`
					Streak   struct{ Days int }
					TopFunds []struct {
						Fund      struct{ Ticker string }
						NetInflow json.RawMessage `json:"net_inflow"`
					} `json:"top_funds"`
				}
			}
		}
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/v1/etf-flows/summary?asset="+string(asset), nil)
		req.Header.Set("Authorization", "Bearer "+free)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&served)
		resp.Body.Close()
		if err != nil || len(served.Data.Assets) != 1 {
			t.Fatalf("GET /v1/etf-flows/summary?asset=%s: %v, %+v", asset, err, served)
		}
		a := served.Data.Assets[0]
		want := map[string]string{"latest": string(a.NetInflow), "last7Days": string(a.Last7d.NetInflow),
			"last30Days": string(a.Last30d.NetInflow), "monthToDate": string(a.MonthToDate.NetInflow),
			"yearToDate": string(a.YearToDate.NetInflow), "streak": strconv.Itoa(a.Streak.Days)}
		for card, w := range want {
			if cards[card] != w {
				t.Errorf("%s card %s shows %q, /v1/etf-flows/summary serves %q", asset, card, cards[card], w)
			}
		}
		// The table shows the top 10 funds in the store's order.
		var rows []struct{ Ticker, Value string }
		eval("read the top funds", `[...document.querySelectorAll("#top-funds tbody tr")].map(
			r => ({ticker: r.dataset.ticker, value: r.querySelector("td").getAttribute("data-value")}))`, &rows)
		s, err := store.SummarizeEtfFlows(ctx, db.EtfFilter{Assets: []db.Asset{asset}})
		if err != nil || s == nil {
			t.Fatalf("summary of %s: %v", asset, err)
		}
		e := s.Assets[0]
		tops, err := store.TopEtfFunds(ctx, []db.TopFundsQuery{{Assets: []db.Asset{asset}, From: *e.Last30Days.From, To: e.LatestFlowDate, Limit: 10}})
		if err != nil {
			t.Fatal(err)
		}
		top := tops[0]
		var got, wantTop []string
		for _, r := range rows {
			got = append(got, r.Ticker+" "+r.Value)
		}
		for _, f := range top {
			wantTop = append(wantTop, f.Fund.Ticker+" "+f.NetInflow.String())
		}
		if len(wantTop) == 0 || !slices.Equal(got, wantTop) {
			t.Errorf("%s top funds: %v, want %v", asset, got, wantTop)
		}
		// Its first five are those /v1 serves.
		for i, f := range a.TopFunds {
			if w := f.Fund.Ticker + " " + string(f.NetInflow); i >= len(got) || got[i] != w {
				t.Errorf("%s top fund %d: the table shows %v, /v1/etf-flows/summary serves %q", asset, i, got, w)
			}
		}
	}
	checkETF(db.AssetBTC)

	// A post imported now appears in the live panel.
	id := 9_000_000_000 + time.Now().UnixNano()%1_000_000
	line := fmt.Sprintf(`{"id":%d,"source":"DashboardTest","username":"dash","body":"$BTC spot ETF inflows top estimates","created_at":%q}`,
		id, time.Now().UTC().Format(time.RFC3339Nano))
	// Import as `feedapi import posts` does; it returns once committed.
	started := time.Now()
	res, err := importer.Import(ctx, store.DB(), importer.KindPosts, strings.NewReader(line+"\n"), importer.Options{})
	committed := time.Now()
	if err != nil || res.Imported != 1 {
		t.Fatalf("import: %+v, %v", res, err)
	}
	uid := "cp_" + strconv.FormatInt(id, 10)
	waitFor("the imported post appears", `document.querySelector('#live-list [data-uid="`+uid+`"]') !== null`)
	var received int64
	eval("read when it arrived", `Number(document.querySelector('#live-list [data-uid="`+uid+`"]').dataset.received)`, &received)
	shown := time.UnixMilli(received)
	t.Logf("the live panel showed the imported post %s after the import returned, %s after it started (product target: within 2s)",
		shown.Sub(committed).Round(time.Millisecond), shown.Sub(started).Round(time.Millisecond))

	// The same event told again by another source joins the post's story:
	// the live panel shows one row for the story, the newest item with the
	// count of the others, instead of adding a row.
	retold := fmt.Sprintf(`{"id":%d,"source":"DashboardTestWire","username":"wire","body":"Spot $BTC ETF inflows top estimates","created_at":%q}`,
		id+1, time.Now().UTC().Format(time.RFC3339Nano))
	if res, err := importer.Import(ctx, store.DB(), importer.KindPosts, strings.NewReader(retold+"\n"), importer.Options{}); err != nil || res.Imported != 1 {
		t.Fatalf("import the retold post: %+v, %v", res, err)
	}
	var sameStory bool
	if err := store.DB().NewRaw("SELECT (SELECT story_id FROM posts WHERE id = ?) = (SELECT story_id FROM posts WHERE id = ?)", id, id+1).Scan(ctx, &sameStory); err != nil || !sameStory {
		t.Fatalf("the retold post is not in the post's story (%v): the detector, not the dashboard, is wrong", err)
	}
	waitFor("one row for the story, counting the first post", `(() => { const r = document.querySelector('#live-list [data-uid="cp_`+strconv.FormatInt(id+1, 10)+`"]');
		return r !== null && /\+1 more/.test(r.textContent) && document.querySelector('#live-list [data-uid="`+uid+`"]') === null; })()`)

	// The filters: a coin no item mentions empties the list; BTC with a
	// search brings the post back, found by the server's own search.
	do("filter by a coin nobody mentions",
		chromedp.SendKeys(chromedp.ID("live-coins"), "ZZZNOPE"),
		chromedp.Click(chromedp.CSS(`#live-filters button[type="submit"]`)))
	waitFor("the list empties", `document.querySelectorAll("#live-list li.item").length === 0`)
	do("search the post",
		chromedp.SetValue(chromedp.ID("live-coins"), "btc"),
		chromedp.SetValue(chromedp.ID("live-q"), `"spot ETF inflows"`),
		chromedp.SetValue(chromedp.ID("live-pane"), "posts"),
		chromedp.Click(chromedp.CSS(`#live-filters button[type="submit"]`)))
	waitFor("the search finds it", `document.querySelector('#live-list [data-uid="`+uid+`"]') !== null`)

	if *dashboardShot != "" {
		do("clear the filters", chromedp.Evaluate[chromedp.Void](`["live-coins", "live-q", "live-pane"].forEach(id => { document.getElementById(id).value = ""; })`),
			chromedp.Click(chromedp.CSS(`#live-filters button[type="submit"]`)))
		waitFor("the live panel fills", `document.querySelectorAll("#live-list li.item").length > 5`)
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(*dashboardShot, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	do("switch to SOL", chromedp.Click(chromedp.CSS(`#asset-switcher [data-asset="SOL"]`)))
	waitFor("SOL loads", `document.body.getAttribute("data-etf-asset") === "SOL"`)
	checkETF(db.AssetSOL)

	for _, size := range []struct{ w, h int64 }{{1366, 900}, {390, 844}} {
		do(fmt.Sprintf("resize to %dx%d", size.w, size.h), chromedp.EmulateViewport(size.w, size.h))
		waitFor("the chart follows the width", `document.querySelector("#chart canvas").getBoundingClientRect().right <= window.innerWidth`)
		var fits struct{ Scroll, Inner int }
		eval("measure the page", `({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})`, &fits)
		if fits.Scroll > fits.Inner {
			t.Errorf("%dx%d: the page is %dpx wide, wider than the window", size.w, size.h, fits.Scroll)
		}
	}

	var resources []string
	eval("list what the page loaded", `performance.getEntriesByType("resource").map(e => e.name)`, &resources)
	for _, r := range resources {
		if !strings.HasPrefix(r, srv.URL) && !strings.HasPrefix(r, strings.Replace(srv.URL, "http", "ws", 1)) {
			t.Errorf("the page loaded %s from another host", r)
		}
	}
	var stored string
	eval("read the browser's storage", `JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie`, &stored)
	if strings.Contains(stored, key) {
		t.Error("the key is in the browser's storage")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, e := range console {
		t.Errorf("console: %s", e)
	}
}
