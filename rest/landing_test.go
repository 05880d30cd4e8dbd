package rest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/landing"
)

// Accept headers as clients send them.
const (
	acceptChrome  = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7"
	acceptFirefox = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"
)

func TestPrefersHTML(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		accept []string
		html   bool
	}{
		{nil, false},             // curl without -H, most HTTP libraries
		{[]string{"*/*"}, false}, // curl, fetch, wget: a tie goes to JSON
		{[]string{""}, false},    // an empty header
		{[]string{acceptChrome}, true},
		{[]string{acceptFirefox}, true},
		{[]string{"text/html"}, true},
		{[]string{"TEXT/HTML"}, true}, // media types are case-insensitive
		{[]string{"text/*"}, true},
		{[]string{"application/xhtml+xml"}, true},
		{[]string{"application/json"}, false},
		{[]string{"application/json, text/html"}, false}, // a tie
		{[]string{"application/json", "text/html"}, false},
		{[]string{"text/html;q=0.5, application/json;q=0.9"}, false},
		{[]string{"application/json;q=0.5, text/html"}, true},
		{[]string{"application/*;q=0.2, text/html;q=0.3"}, true},
		{[]string{"text/html;level=1;q=0.4, */*;q=0.5"}, false},
		{[]string{"text/html; q=1.0, */*"}, false},
		{[]string{"text/html;q=0, */*"}, false},                                    // refuses HTML
		{[]string{"text/*;q=0.9, text/html;q=0.1, application/json;q=0.5"}, false}, // the most specific range counts
		{[]string{"image/png"}, false},                                             // neither: the API's own type
		{[]string{"text/html;q=bogus"}, false},                                     // a malformed q counts as 0
		{[]string{"text/html;q=1.5"}, false},                                       // out of range
		{[]string{"text/html;q=0.9999"}, false},                                    // more than three decimals
		{[]string{"text/html;q=0.001"}, true},                                      // anything above JSON's 0
		{[]string{"application/json;q=0.001, text/html;q=0.002"}, true},
		{[]string{"nonsense, text/html"}, true},
	} {
		if got := landing.PrefersHTML(tc.accept); got != tc.html {
			t.Errorf("Accept %q: HTML %v, want %v", tc.accept, got, tc.html)
		}
	}
}

// landingData is the landing page's JSON data.
type landingData struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Links       map[string]struct {
		Href, Title, Description string
	} `json:"links"`
}

// TestLanding checks both forms of the landing page at / and /v1: HTML for
// a browser's Accept, else the envelope; that they vary by Accept and
// revalidate each with its own ETag; that its links are the declared ones,
// in order, each answering 200 without a key to what follows it (a browser
// for the pages, a program for the JSON ones); and that it refuses query
// parameters and other methods as every endpoint does.
func TestLanding(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	htmlLink := regexp.MustCompile(`<li data-rel="([a-z]+)"><a href="([^"]+)">([^<]+)</a>`)
	for _, path := range contract.LandingPaths {
		t.Run(path, func(t *testing.T) {
			t.Parallel()
			for _, accept := range []string{"", "*/*", "application/json"} {
				var r *resp
				if accept == "" {
					r = a.get(t, path, "")
				} else {
					r = a.get(t, path, "", "Accept", accept)
				}
				r.wantStatus(t, http.StatusOK)
				if ct := r.Header.Get("Content-Type"); ct != envelope.ContentTypeJSON {
					t.Errorf("Accept %q: Content-Type %q, want JSON", accept, ct)
				}
				if got := r.Header.Values("Vary"); !slices.Contains(got, "Accept") {
					t.Errorf("Accept %q: Vary %q, want Accept in it", accept, got)
				}
				if r.env.Meta.Tier != nil {
					t.Errorf("meta.tier %q, want null", *r.env.Meta.Tier)
				}
				var d landingData
				if err := json.Unmarshal(r.env.Data, &d); err != nil {
					t.Fatalf("data: %v: %s", err, r.env.Data)
				}
				if d.Name != "feedapi" || d.Description != landing.Description || len(d.Links) != len(contract.LandingLinks) {
					t.Errorf("data: %s", r.env.Data)
				}
				for _, l := range contract.LandingLinks {
					if got := d.Links[l.Rel]; got.Href != l.Href || got.Title != l.Title || got.Description != l.Description {
						t.Errorf("data.links.%s = %+v, want %+v", l.Rel, got, l)
					}
				}
				// The order of the declaration, which the page shows too.
				var order []string
				for _, m := range regexp.MustCompile(`"([a-z]+)":\{"href"`).FindAllSubmatch(r.env.Data, -1) {
					order = append(order, string(m[1]))
				}
				if want := rels(); !slices.Equal(order, want) {
					t.Errorf("data.links in the order %v, want %v", order, want)
				}
			}

			page := a.get(t, path, "", "Accept", acceptChrome)
			page.wantStatus(t, http.StatusOK)
			if ct := page.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Fatalf("a browser gets Content-Type %q, want HTML", ct)
			}
			if got := page.Header.Values("Vary"); !slices.Contains(got, "Accept") {
				t.Errorf("the page: Vary %q, want Accept in it", got)
			}
			body := string(page.plain)
			if regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(body) {
				t.Errorf("the page loads or links something on another host:\n%s", body)
			}
			var shown []string
			for _, m := range htmlLink.FindAllStringSubmatch(body, -1) {
				shown = append(shown, m[1]+" "+m[2]+" "+m[3])
			}
			var want []string
			for _, l := range contract.LandingLinks {
				want = append(want, l.Rel+" "+l.Href+" "+l.Title)
			}
			if !slices.Equal(shown, want) {
				t.Errorf("the page links %q, want %q", shown, want)
			}

			// Each form revalidates with its own tag, never the other's.
			js := a.get(t, path, "")
			for _, tc := range []struct {
				name, accept, tag string
				want              int
			}{
				{"JSON with its tag", "", js.Header.Get("ETag"), http.StatusNotModified},
				{"HTML with its tag", acceptChrome, page.Header.Get("ETag"), http.StatusNotModified},
				{"JSON with the page's tag", "", page.Header.Get("ETag"), http.StatusOK},
				{"HTML with the JSON's tag", acceptChrome, js.Header.Get("ETag"), http.StatusOK},
			} {
				h := []string{"If-None-Match", tc.tag}
				if tc.accept != "" {
					h = append(h, "Accept", tc.accept)
				}
				if r := a.get(t, path, "", h...); r.StatusCode != tc.want {
					t.Errorf("%s: %d, want %d", tc.name, r.StatusCode, tc.want)
				}
			}
			for _, accept := range []string{"", acceptChrome} {
				head := a.do(t, http.MethodHead, path, "", nil, "Accept", accept)
				head.wantStatus(t, http.StatusOK)
				if head.Header.Get("Content-Type") == "" || head.Header.Get("ETag") == "" {
					t.Errorf("HEAD (Accept %q): %v", accept, head.Header)
				}
			}

			bad := a.get(t, path+"?format=html", "", "Accept", acceptChrome)
			bad.wantStatus(t, http.StatusBadRequest)
			if !strings.Contains(bad.env.Error.Message, `"format"`) {
				t.Errorf("a query parameter: %s, want a 400 naming it", bad.plain)
			}
			post := a.do(t, http.MethodPost, path, "", nil)
			post.wantStatus(t, http.StatusMethodNotAllowed)
			if got := post.Header.Get("Allow"); got != "GET, HEAD" {
				t.Errorf("POST: Allow %q", got)
			}
		})
	}

	// Every link answers without a key: the pages to a browser, the
	// documents to a program.
	for _, l := range contract.LandingLinks {
		accept := "application/json"
		if l.Rel == "reference" || l.Rel == "graphql" || l.Rel == "dashboard" {
			accept = acceptChrome
		}
		r := a.get(t, l.Href, "", "Accept", accept)
		r.wantStatus(t, http.StatusOK)
		if want := accept == acceptChrome; strings.HasPrefix(r.Header.Get("Content-Type"), "text/html") != want {
			t.Errorf("%s (%s): Content-Type %q", l.Rel, l.Href, r.Header.Get("Content-Type"))
		}
	}
}

// rels are the names of the landing page's links, in order.
func rels() []string {
	var out []string
	for _, l := range contract.LandingLinks {
		out = append(out, l.Rel)
	}
	return out
}

// TestLandingAndReferenceAreLimitedPerClientIP: no key, and the client IP's
// budget, shared with the other endpoints without a key.
func TestLandingAndReferenceAreLimitedPerClientIP(t *testing.T) {
	t.Parallel()
	a := newAPI(t, func(c *Config) { c.Auth.IPRateLimit = 4 })
	wantRateHeaders(t, a.get(t, "/", "", "Accept", acceptChrome), 4, 3)
	wantRateHeaders(t, a.get(t, "/v1", "", "Accept", "application/json"), 4, 2)
	wantRateHeaders(t, a.get(t, contract.ReferencePath, a.free), 4, 1)
	wantRateHeaders(t, a.get(t, contract.ReferenceAssetsPath+"/feedapi-reference.js", ""), 4, 0)
	for _, path := range []string{"/", "/v1", contract.ReferencePath, contract.ReferenceAssetsPath + "/feedapi-reference.css", "/v1/health"} {
		wantRateLimited(t, a.get(t, path, "", "Accept", acceptChrome))
	}
	// A key's budget is its own.
	a.get(t, "/v1/sources", a.free).wantStatus(t, http.StatusOK)
}

// TestReferenceIsSelfContained checks that the API reference's page loads
// its scripts and stylesheet from the API itself (no CDN: it works
// offline), with types and validators, and names the served document.
func TestReferenceIsSelfContained(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	page := a.get(t, contract.ReferencePath, "")
	page.wantStatus(t, http.StatusOK)
	if ct := page.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	body := string(page.plain)
	if regexp.MustCompile(`(src|href)="(https?:)?//`).MatchString(body) {
		t.Errorf("the page loads something from another host:\n%s", body)
	}
	if !strings.Contains(body, `data-document="/v1/openapi.json"`) {
		t.Errorf("the page does not render the served document:\n%s", body)
	}
	refs := regexp.MustCompile(`(?:src|href)="(/reference/assets/[^"]+)"`).FindAllStringSubmatch(body, -1)
	if len(refs) != 3 {
		t.Fatalf("the page references %d assets, want its 2 scripts and its stylesheet: %q", len(refs), refs)
	}
	for _, ref := range refs {
		r := a.get(t, ref[1], "")
		r.wantStatus(t, http.StatusOK)
		wantType, wantCache := "text/javascript; charset=utf-8", "no-cache"
		if strings.HasSuffix(ref[1], ".css") {
			wantType = "text/css; charset=utf-8"
		}
		if strings.Contains(ref[1], "redoc-") {
			wantCache = "public, max-age=31536000, immutable"
		}
		if r.Header.Get("Content-Type") != wantType || len(r.plain) < 100 || r.Header.Get("Cache-Control") != wantCache {
			t.Errorf("%s: %q, %d bytes, Cache-Control %q", ref[1], r.Header.Get("Content-Type"), len(r.plain), r.Header.Get("Cache-Control"))
		}
		if again := a.get(t, ref[1], "", "If-None-Match", r.Header.Get("Etag")); again.StatusCode != http.StatusNotModified {
			t.Errorf("%s: revalidation %d, want 304", ref[1], again.StatusCode)
		}
	}
	missing := a.get(t, contract.ReferenceAssetsPath+"/redoc-0.0.0.standalone.js", "")
	missing.wantStatus(t, http.StatusNotFound)
	if missing.env.Error == nil || missing.env.Error.Code != "not_found" {
		t.Errorf("unknown asset: %s, want the not_found envelope", missing.plain)
	}
	head := a.do(t, http.MethodHead, contract.ReferencePath, "", nil)
	head.wantStatus(t, http.StatusOK)
	if head.Header.Get("ETag") != page.Header.Get("ETag") || head.Header.Get("Content-Type") != page.Header.Get("Content-Type") {
		t.Errorf("HEAD %s: %v, want GET's headers", contract.ReferencePath, head.Header)
	}
	if again := a.get(t, contract.ReferencePath, "", "If-None-Match", page.Header.Get("ETag")); again.StatusCode != http.StatusNotModified {
		t.Errorf("%s: revalidation %d, want 304", contract.ReferencePath, again.StatusCode)
	}
	if post := a.do(t, http.MethodPost, contract.ReferencePath, "", nil); post.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST %s: %d, want 405", contract.ReferencePath, post.StatusCode)
	}
}

// browserWatch records what a tab writes to its console (errors and
// warnings, and uncaught exceptions) and every request it makes.
type browserWatch struct {
	mu       sync.Mutex
	console  []string
	requests []string
}

// watchBrowser starts recording the tab of ctx.
func watchBrowser(t *testing.T, ctx context.Context) *browserWatch {
	t.Helper()
	w := &browserWatch{}
	if err := chromedp.Listen(ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			w.requests = append(w.requests, e.Request.URL)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				w.console = append(w.console, string(e.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			w.console = append(w.console, "exception: "+e.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError || e.Entry.Level == log.EntryLevelWarning {
				w.console = append(w.console, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	for _, enable := range []func() error{
		func() error { _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); return err },
	} {
		if err := enable(); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// check fails t for anything written to the console, and for any request
// to another origin than origin (data: and origin's blob: URLs are the
// page's own).
func (w *browserWatch) check(t *testing.T, origin string) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, c := range w.console {
		t.Errorf("console: %s", c)
	}
	for _, u := range w.requests {
		if !strings.HasPrefix(u, origin+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:"+origin+"/") {
			t.Errorf("a request to another host: %.200s", u)
		}
	}
	if len(w.requests) == 0 {
		t.Error("no request recorded: the watch saw nothing")
	}
}

// TestLandingAndReferenceInABrowser opens the landing page and the API
// reference in headless Chromium, as a person would. The landing page, at /
// and /v1 with the browser's own Accept, shows the declared links, and each
// opens with 200 when followed. The API reference renders the document the
// server serves at /v1/openapi.json: the operations it shows, read from each
// operation's section as the method and path it displays, must be exactly
// the document's paths × methods, HEAD included (Redoc lists HEAD
// operations), so every /v1 operation among them. Throughout, nothing is
// written to the console and nothing is asked of another host.
func TestLandingAndReferenceInABrowser(t *testing.T) {
	bin := chromium()
	if bin == "" {
		t.Skip("no Chromium: install Debian's chromium (apt-get install chromium; .ci/run does) or set CHROMIUM")
	}
	t.Parallel()
	a := newAPI(t)
	ctx := browserTab(t, bin)
	watch := watchBrowser(t, ctx)

	type shownLink struct{ Rel, Href, Title, URL string }
	var followed []shownLink
	for _, path := range contract.LandingPaths {
		var shown []shownLink
		v, err := chromedp.Run(ctx, chromedp.NavigateResponse(a.srv.URL+path))
		if err == nil && v.Status != http.StatusOK {
			err = fmt.Errorf("status %d", v.Status)
		}
		if err == nil {
			err = chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("links")))
		}
		var raw json.RawMessage
		if err == nil {
			raw, err = chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](`[...document.querySelectorAll("#links li")].map(li => {
				const a = li.querySelector("a");
				return {rel: li.dataset.rel, href: a.getAttribute("href"), title: a.textContent, url: a.href};
			})`))
		}
		if err == nil {
			err = json.Unmarshal(raw, &shown)
		}
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		var got, want []string
		for _, l := range shown {
			got = append(got, l.Rel+" "+l.Href+" "+l.Title)
		}
		for _, l := range contract.LandingLinks {
			want = append(want, l.Rel+" "+l.Href+" "+l.Title)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s shows the links %q, want %q", path, got, want)
		}
		followed = shown
	}
	// Each link answers, fetched from the page as a navigation asks (a real
	// navigation to a JSON document would have the browser ask for the
	// site's icon, which is not the page's doing).
	for _, l := range followed {
		status, err := chromedp.Run(ctx, chromedp.Evaluate[int](`fetch(`+strconv.Quote(l.URL)+`, {headers: {Accept: "text/html"}}).then(r => r.status)`,
			chromedp.EvalAwaitPromise))
		if err != nil || status != http.StatusOK {
			t.Errorf("following %s (%s): %v, status %d", l.Rel, l.URL, err, status)
		}
	}

	// The reference, and the document it should show.
	if err := chromedp.Do(ctx, chromedp.Navigate(a.srv.URL+contract.ReferencePath)); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.dataset.reference !== undefined`)); err != nil {
		t.Fatalf("the reference never finished rendering: %v", err)
	}
	state, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.dataset.reference + ": " + document.getElementById("reference-status").textContent`))
	if err != nil || !strings.HasPrefix(state, "ready") {
		t.Fatalf("the reference: %v, %q", err, state)
	}
	ops, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('[data-section-id^="operation/"]')].map(s => {
		const verb = s.querySelector(".http-verb");
		return verb.textContent.toUpperCase() + " " + verb.nextElementSibling.textContent;
	})`))
	if err != nil {
		t.Fatal(err)
	}
	served := a.get(t, "/v1/openapi.json", "")
	served.wantStatus(t, http.StatusOK)
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(served.plain, &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	v1 := 0
	for path, item := range doc.Paths {
		for method := range item {
			switch method {
			case "get", "head", "post", "put", "delete", "patch", "options", "trace":
				want = append(want, strings.ToUpper(method)+" "+path)
				if strings.HasPrefix(path, "/v1/") {
					v1++
				}
			}
		}
	}
	slices.Sort(want)
	slices.Sort(ops)
	if !slices.Equal(ops, want) {
		t.Errorf("the reference shows %d operations, the document has %d (paths × methods):\nshown    %q\ndocument %q", len(ops), len(want), ops, want)
	}
	if v1 < 20 {
		t.Errorf("the document has %d /v1 operations: not the served document", v1)
	}
	t.Logf("the reference shows %d operations, %d of them on /v1", len(ops), v1)
	watch.check(t, a.srv.URL)
}
