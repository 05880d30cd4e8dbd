package rest

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/feedapi/feedapi/db"
	feedclient "github.com/feedapi/feedapi/rest/client"
)

// The generated Go client (rest/client) against a real served handler:
// every endpoint, errors included, so that a change of the document that
// breaks clients breaks these tests (and the build of the client). Every
// exchange the client makes is also checked against the document by
// libopenapi-validator (validateAgainstOpenAPI) and kin-openapi's
// openapi3filter (kinCheck).

// checkingTransport sends requests as a client would (gzip accepted and
// undone) and checks every exchange against the document.
type checkingTransport struct {
	t   testing.TB
	doc []byte
	mu  sync.Mutex
	n   int // exchanges checked
}

func (c *checkingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		if body, err = gunzip(body); err != nil {
			return nil, err
		}
		resp.Header.Del("Content-Encoding")
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	validateAgainstOpenAPI(c.t, c.doc, req, resp, body)
	if err := kinCheck(c.doc, req, resp.StatusCode, resp.Header, body); err != nil {
		c.t.Error(err)
	}
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return resp, nil
}

// newClient returns the generated client of a's server sending key (none
// when empty), and its transport.
func (a *api) newClient(t testing.TB, key string) (*feedclient.ClientWithResponses, *checkingTransport) {
	t.Helper()
	tr := &checkingTransport{t: t, doc: a.doc}
	opts := []feedclient.ClientOption{feedclient.WithHTTPClient(&http.Client{Transport: tr})}
	if key != "" {
		opts = append(opts, feedclient.WithRequestEditorFn(feedclient.WithBearer(key)))
	}
	c, err := feedclient.NewClientWithResponses(a.srv.URL, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c, tr
}

// wantError asserts an error answer decoded by the client: its code and a
// message that mentions each of words.
func wantError(t *testing.T, what string, status, wantStatus int, e *feedclient.ErrorEnvelope, code feedclient.ErrorCode, words ...string) {
	t.Helper()
	if status != wantStatus || e == nil {
		t.Fatalf("%s: status %d, decoded error %v; want %d with the error envelope", what, status, e, wantStatus)
	}
	if e.Error.Code != code || e.Error.Message == "" || e.Meta.RequestId == "" {
		t.Errorf("%s: error %+v, want code %s, a message and a request id", what, e, code)
	}
	for _, w := range words {
		if !strings.Contains(e.Error.Message, w) {
			t.Errorf("%s: message %q does not mention %q", what, e.Error.Message, w)
		}
	}
}

func TestClientEveryEndpoint(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	c, tr := a.newClient(t, a.free)
	posts := a.addPosts(9_007_199_254_740_000, 3, "client-src")
	maxID := a.addPosts(9_007_199_254_740_990, 1, "client-src")[0] // id 2^53-1
	briefs := a.addBriefs(900_000, 2)

	t.Run("health and document, no key", func(t *testing.T) {
		open, _ := a.newClient(t, "")
		h, err := open.GetHealthWithResponse(ctx, nil)
		if err != nil || h.JSON200 == nil {
			t.Fatalf("health: %v, status %d", err, h.StatusCode())
		}
		if h.JSON200.Data.Status != feedclient.HealthStatusOk || h.JSON200.Meta.Tier != nil {
			t.Errorf("health: %+v", h.JSON200)
		}
		d, err := open.GetOpenAPIWithResponse(ctx, nil)
		if err != nil || d.JSON200 == nil || d.JSON200.Openapi != "3.1.0" {
			t.Fatalf("openapi: %v, status %d", err, d.StatusCode())
		}
		if !bytes.Equal(d.Body, a.doc) {
			t.Error("the served document is not the one the test checks against")
		}
	})

	t.Run("posts with raw, one page", func(t *testing.T) {
		r, err := c.ListPostsWithResponse(ctx, &feedclient.ListPostsParams{
			Limit: ptr(2), Source: ptr("client-src"), IncludeRaw: ptr(true), IncludeBody: ptr(false)})
		if err != nil || r.JSON200 == nil {
			t.Fatalf("list posts: %v, status %d %s", err, r.StatusCode(), r.Body)
		}
		page := r.JSON200
		if len(page.Data) != 2 || !page.Pagination.HasMore || page.Pagination.NextCursor == nil {
			t.Fatalf("page: %d posts, pagination %+v", len(page.Data), page.Pagination)
		}
		if got := page.Data[0].Id; got != maxID.ID || got != 9_007_199_254_740_991 {
			t.Errorf("newest id %d, want 2^53-1", got)
		}
		if p := page.Data[0]; p.Raw == nil || p.Body != nil || *page.Meta.Tier != feedclient.TierFree {
			t.Errorf("post: raw %v, body %v, tier %v", p.Raw, p.Body, page.Meta.Tier)
		}
	})

	t.Run("every page of posts", func(t *testing.T) {
		var ids []int64
		for p, err := range c.AllPosts(ctx, feedclient.ListPostsParams{Limit: ptr(1), Source: ptr("client-src")}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, p.Id)
		}
		want := []int64{maxID.ID, posts[2].ID, posts[1].ID, posts[0].ID}
		if !slices.Equal(ids, want) {
			t.Errorf("AllPosts: got %v, want %v", ids, want)
		}
	})

	t.Run("one post, its 404 and a bad cursor", func(t *testing.T) {
		r, err := c.GetPostWithResponse(ctx, posts[1].ID, &feedclient.GetPostParams{IncludeRaw: ptr(false)})
		if err != nil || r.JSON200 == nil || r.JSON200.Data.Id != posts[1].ID || r.JSON200.Data.Raw != nil {
			t.Fatalf("get post: %v, status %d %s", err, r.StatusCode(), r.Body)
		}
		if r.JSON200.Pagination != nil {
			t.Errorf("pagination of one post: %v", r.JSON200.Pagination)
		}
		nf, err := c.GetPostWithResponse(ctx, 9_223_372_036_854_775_807, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, "missing post", nf.StatusCode(), 404, nf.JSON404, feedclient.ErrorCodeNotFound, "9223372036854775807")
		bad, err := c.ListPostsWithResponse(ctx, &feedclient.ListPostsParams{Cursor: ptr("not-a-cursor")})
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, "bad cursor", bad.StatusCode(), 400, bad.JSON400, feedclient.ErrorCodeBadRequest, "cursor")
		since, err := c.ListPostsWithResponse(ctx, &feedclient.ListPostsParams{Since: ptr("2031-01-06T10:30:15+01:00"), Source: ptr("client-src")})
		if err != nil || since.JSON200 == nil || len(since.JSON200.Data) != 4 {
			t.Fatalf("since with an offset: %v, status %d %s", err, since.StatusCode(), since.Body)
		}
	})

	t.Run("briefs", func(t *testing.T) {
		var ids []int64
		for b, err := range c.AllBriefs(ctx, feedclient.ListBriefsParams{Limit: ptr(1)}) {
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, b.Id)
			if len(ids) == 2 {
				break
			}
		}
		if want := []int64{briefs[1].ID, briefs[0].ID}; !slices.Equal(ids, want) {
			t.Errorf("AllBriefs: got %v, want %v", ids, want)
		}
		r, err := c.GetBriefWithResponse(ctx, briefs[0].ID, nil)
		if err != nil || r.JSON200 == nil || r.JSON200.Data.Content != briefs[0].Content {
			t.Fatalf("get brief: %v, status %d %s", err, r.StatusCode(), r.Body)
		}
		nf, err := c.GetBriefWithResponse(ctx, 1<<40, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, "missing brief", nf.StatusCode(), 404, nf.JSON404, feedclient.ErrorCodeNotFound)
	})

	t.Run("firehose", func(t *testing.T) {
		msgs := a.addFirehose(800_000, 5, "ClientFeed", []db.Pane{db.PaneCrypto}, []bool{true, false})
		var ids []int64
		for m, err := range c.AllFirehose(ctx, feedclient.ListFirehoseParams{Limit: ptr(2), Source: ptr("clientfeed"),
			Pane: ptr(feedclient.ListFirehoseParamsPaneCrypto), Important: ptr(true), IncludeSummary: ptr(true)}) {
			if err != nil {
				t.Fatal(err)
			}
			if !m.Important || m.Pane != feedclient.FirehoseMessagePaneCrypto {
				t.Errorf("message %d: important %v pane %s", m.Id, m.Important, m.Pane)
			}
			ids = append(ids, m.Id)
		}
		var want []int64
		for i := len(msgs) - 1; i >= 0; i-- {
			if msgs[i].Important {
				want = append(want, msgs[i].ID)
			}
		}
		if !slices.Equal(ids, want) {
			t.Errorf("AllFirehose: got %v, want %v", ids, want)
		}
	})

	t.Run("sources and ETF flows", func(t *testing.T) {
		s, err := c.GetSourcesWithResponse(ctx, nil)
		if err != nil || s.JSON200 == nil || !slices.Contains(s.JSON200.Data.CuratedSources, "client-src") ||
			len(s.JSON200.Data.EtfAssets) != 4 {
			t.Fatalf("sources: %v, status %d %s", err, s.StatusCode(), s.Body)
		}
		from := openapi_types.Date{Time: time.Date(2024, 1, 11, 0, 0, 0, 0, time.UTC)}
		f, err := c.ListEtfFlowsWithResponse(ctx, &feedclient.ListEtfFlowsParams{Asset: ptr("btc,ETH"), From: &from, Limit: ptr(3)})
		if err != nil || f.JSON200 == nil || len(f.JSON200.Data) != 3 || f.JSON200.Meta.Units != feedclient.Usd {
			t.Fatalf("etf flows: %v, status %d %s", err, f.StatusCode(), f.Body)
		}
		l, err := c.ListLatestEtfFlowsWithResponse(ctx, nil)
		if err != nil || l.JSON200 == nil || len(l.JSON200.Data) != 4 {
			t.Fatalf("latest etf flows: %v, status %d %s", err, l.StatusCode(), l.Body)
		}
		bad, err := c.ListEtfFlowsWithResponse(ctx, &feedclient.ListEtfFlowsParams{Asset: ptr("XRP")})
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, "unknown asset", bad.StatusCode(), 400, bad.JSON400, feedclient.ErrorCodeBadRequest, "asset")
	})

	t.Run("ETF funds, their figures and the paginated flows", func(t *testing.T) {
		funds, err := c.ListEtfFundsWithResponse(ctx, &feedclient.ListEtfFundsParams{Asset: ptr("sol")})
		if err != nil || funds.JSON200 == nil || len(funds.JSON200.Data) == 0 || funds.JSON200.Data[0].Asset != "SOL" {
			t.Fatalf("etf funds: %v, status %d %s", err, funds.StatusCode(), funds.Body)
		}
		var n int
		params := &feedclient.ListEtfFundFlowsParams{Fund: ptr("ibit,gbtc"), Limit: ptr(200)}
		for range 20 {
			p, err := c.ListEtfFundFlowsWithResponse(ctx, params)
			if err != nil || p.JSON200 == nil {
				t.Fatalf("etf fund flows: %v, status %d %s", err, p.StatusCode(), p.Body)
			}
			n += len(p.JSON200.Data)
			if !p.JSON200.Pagination.HasMore {
				break
			}
			params.Cursor = p.JSON200.Pagination.NextCursor
		}
		if n < 1000 {
			t.Errorf("IBIT and GBTC: %d figures, want every day since 2024", n)
		}
		flows, err := c.ListEtfFlowsWithResponse(ctx, &feedclient.ListEtfFlowsParams{Paginate: ptr(true), Limit: ptr(2)})
		if err != nil || flows.JSON200 == nil || len(flows.JSON200.Data) != 2 {
			t.Fatalf("paginated etf flows: %v, status %d %s", err, flows.StatusCode(), flows.Body)
		}
		unknown, err := c.ListEtfFundFlowsWithResponse(ctx, &feedclient.ListEtfFundFlowsParams{Fund: ptr("NOPE")})
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, "unknown fund", unknown.StatusCode(), 400, unknown.JSON400, feedclient.ErrorCodeBadRequest, "fund")
	})

	t.Run("HEAD", func(t *testing.T) {
		h, err := c.HeadListPostsWithResponse(ctx, &feedclient.HeadListPostsParams{Limit: ptr(1)})
		if err != nil || h.StatusCode() != 200 || len(h.Body) != 0 || h.HTTPResponse.Header.Get("ETag") == "" {
			t.Fatalf("HEAD posts: %v, status %d, %d bytes", err, h.StatusCode(), len(h.Body))
		}
		g, err := c.HeadGetHealthWithResponse(ctx, nil)
		if err != nil || g.StatusCode() != 200 {
			t.Fatalf("HEAD health: %v, status %d", err, g.StatusCode())
		}
	})

	t.Run("405", func(t *testing.T) {
		r, err := c.ListPostsWithResponse(ctx, nil, func(_ context.Context, req *http.Request) error {
			req.Method = http.MethodDelete
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, "DELETE /v1/posts", r.StatusCode(), 405, r.JSON405, feedclient.ErrorCodeMethodNotAllowed, "DELETE")
		if got := r.HTTPResponse.Header.Get("Allow"); got != "GET, HEAD" {
			t.Errorf("Allow: %q", got)
		}
	})

	t.Run("401 and 403", func(t *testing.T) {
		anon, _ := a.newClient(t, "")
		r, err := anon.ListPostsWithResponse(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, "no key", r.StatusCode(), 401, r.JSON401, feedclient.ErrorCodeUnauthorized)
		g, err := c.GraphqlPostWithResponse(ctx, feedclient.GraphqlPostJSONRequestBody{Query: "{ health { status } }"})
		if err != nil {
			t.Fatal(err)
		}
		wantError(t, "GraphQL with a free key", g.StatusCode(), 403, g.JSON403, feedclient.ErrorCodeForbiddenTier, "internal")
	})

	t.Run("GraphQL ids above 32 bits", func(t *testing.T) {
		in, _ := a.newClient(t, a.intern)
		vars := map[string]any{"id": maxID.ID}
		for _, body := range []feedclient.GraphqlPostJSONRequestBody{
			{Query: "{ post(id: 9007199254740991) { id source } }"},
			{Query: "query($id: Int64!) { post(id: $id) { id source } }", Variables: &vars},
			{Query: `{ post(id: "9007199254740991") { id source } }`},
		} {
			r, err := in.GraphqlPostWithResponse(ctx, body)
			if err != nil || r.JSON200 == nil || r.JSON200.Data == nil {
				t.Fatalf("%s: %v, status %d %s", body.Query, err, r.StatusCode(), r.Body)
			}
			if !strings.Contains(string(r.Body), `"id":9007199254740991`) {
				t.Errorf("%s: %s, want the id as a JSON number", body.Query, r.Body)
			}
		}
		r, err := in.GraphqlPostWithResponse(ctx, feedclient.GraphqlPostJSONRequestBody{Query: "{ post(id: 2147483648) { id } }"})
		// Taken as an id (graphql-js refuses it as an Int): no such post.
		if err != nil || r.JSON200 == nil || r.JSON200.Errors == nil || len(*r.JSON200.Errors) != 1 ||
			!strings.Contains((*r.JSON200.Errors)[0].Message, "post 2147483648 not found") {
			t.Fatalf("post(id: 2147483648): %v, status %d %s", err, r.StatusCode(), r.Body)
		}
		bad, err := in.GraphqlPostWithResponse(ctx, feedclient.GraphqlPostJSONRequestBody{Query: "{ post(id: 1.5) { id } }"})
		if err != nil || bad.StatusCode() == 200 && bad.JSON200.Errors == nil {
			t.Fatalf("post(id: 1.5): %v, status %d %s", err, bad.StatusCode(), bad.Body)
		}
	})

	if tr.n < 20 {
		t.Errorf("only %d exchanges were checked", tr.n)
	}
}

// A money value with 13 and more significant digits decodes exactly through
// the generated client: it is a float64 (format double), never float32.
func TestClientMoneyIsExact(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	want := db.EtfFlow{
		Asset: db.AssetBTC, FlowDate: time.Date(2031, 3, 3, 0, 0, 0, 0, time.UTC),
		NetInflow: db.Money(-28_740_867_616), CumNetInflow: db.Money(6_878_708_045_239),
		NetAssets: db.Money(14_048_753_685_210), ValueTraded: db.Money(9_999_999_999_999_99),
		UpdatedAt: fxTime,
	}
	if _, err := a.bdb.NewInsert().Model(&want).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	c, _ := a.newClient(t, a.free)
	r, err := c.ListLatestEtfFlowsWithResponse(ctx, &feedclient.ListLatestEtfFlowsParams{Asset: ptr("BTC")})
	if err != nil || r.JSON200 == nil || len(r.JSON200.Data) != 1 {
		t.Fatalf("latest BTC: %v, status %d %s", err, r.StatusCode(), r.Body)
	}
	got := r.JSON200.Data[0]
	for _, tc := range []struct {
		field string
		got   float64
		want  float64
	}{
		{"net_inflow", got.NetInflow, -287408676.16},
		{"cum_net_inflow", got.CumNetInflow, 68787080452.39},
		{"net_assets", got.NetAssets, 140487536852.10},
		{"value_traded", got.ValueTraded, 9999999999999.99},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: got %.2f, want %.2f", tc.field, tc.got, tc.want)
		}
		if float64(float32(tc.want)) == tc.want {
			t.Errorf("%s: %.2f is exact in float32 too, so this test could not fail", tc.field, tc.want)
		}
	}
	if !bytes.Contains(r.Body, []byte(`"cum_net_inflow":68787080452.39`)) {
		t.Errorf("the body does not carry the amount as written: %s", r.Body)
	}
}

// The Poller sends the last ETag and gets 304 while nothing changed, then
// the new page once something did.
func TestClientPoller(t *testing.T) {
	a := newAPI(t)
	ctx := context.Background()
	c, _ := a.newClient(t, a.free)
	a.addPosts(700_000, 2, "poll-src")
	p := feedclient.NewPoller[feedclient.PostsPage](func(ctx context.Context, e ...feedclient.RequestEditorFn) (*http.Response, error) {
		return c.ListPosts(ctx, &feedclient.ListPostsParams{Source: ptr("poll-src")}, e...)
	})
	first, changed, err := p.Poll(ctx)
	if err != nil || !changed || len(first.Data) != 2 || p.ETag() == "" {
		t.Fatalf("first poll: %v, changed %v, page %+v, etag %q", err, changed, first, p.ETag())
	}
	again, changed, err := p.Poll(ctx)
	if err != nil || changed || again != first {
		t.Fatalf("second poll: %v, changed %v; want the same page, unchanged (304)", err, changed)
	}
	a.addPosts(700_010, 1, "poll-src")
	third, changed, err := p.Poll(ctx)
	if err != nil || !changed || len(third.Data) != 3 || third.Data[0].Id != 700_011 {
		t.Fatalf("third poll: %v, changed %v, page %+v", err, changed, third)
	}
	bad := feedclient.NewPoller[feedclient.PostsPage](func(ctx context.Context, e ...feedclient.RequestEditorFn) (*http.Response, error) {
		return c.ListPosts(ctx, &feedclient.ListPostsParams{Limit: ptr(500)}, e...)
	})
	_, _, err = bad.Poll(ctx)
	if e, ok := err.(*feedclient.APIError); !ok || e.Status != 400 || e.Code != feedclient.ErrorCodeBadRequest || !strings.Contains(e.Message, "limit") {
		t.Errorf("limit=500: got %v, want an APIError 400 naming limit", err)
	}
}

// A client over a rate-limited key decodes the 429 with its message.
func TestClientRateLimited(t *testing.T) {
	a := newAPI(t)
	limited := a.variant(t, func(c *Config) { c.Auth.RateLimit = 1 })
	c, _ := limited.newClient(t, limited.pro)
	ctx := context.Background()
	if r, err := c.GetSourcesWithResponse(ctx, nil); err != nil || r.JSON200 == nil {
		t.Fatalf("first request: %v", err)
	}
	r, err := c.GetSourcesWithResponse(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantError(t, "second request", r.StatusCode(), 429, r.JSON429, feedclient.ErrorCodeRateLimited, "rate limit")
}
