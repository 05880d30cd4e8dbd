package rest

import (
	"bytes"
	"embed"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/feedapi/feedapi/rest/contract"
)

// landingDescription says what the service is, on the page and in its JSON.
const landingDescription = "A read-only JSON API of a curated crypto news feed, weekly briefs in Markdown, the raw news firehose split into panes and, where the deployment offers them, daily US spot-ETF flows: polled on /v1, streamed (server-sent events) and subscribed (GraphQL)."

// cacheLanding is the Cache-Control of both forms of the landing page:
// revalidated with their ETags, so that a new build's links show at once.
const cacheLanding = "no-cache"

// landingFiles are the landing page's template, and referenceFiles the API
// reference's page and assets (rest/reference/README.md says which package
// and version, and how to upgrade it).
//
//go:embed landing/index.html
var landingFiles embed.FS

//go:embed reference/index.html reference/*.js reference/*.css
var referenceFiles embed.FS

// landing is the landing page in its two forms.
type landing struct {
	page *staticPage
	data []byte // the JSON value of the envelope's data
}

func newLanding() (*landing, error) {
	page, err := newStaticPage(landingFiles, "landing", "", map[string]any{
		"Description": landingDescription, "Links": contract.LandingLinks})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"name":"feedapi","description":`)
	appendJSONString(&b, landingDescription)
	b.WriteString(`,"links":{`)
	for i, l := range contract.LandingLinks {
		if i > 0 {
			b.WriteByte(',')
		}
		appendJSONString(&b, l.Rel)
		b.WriteString(`:{"href":`)
		appendJSONString(&b, l.Href)
		b.WriteString(`,"title":`)
		appendJSONString(&b, l.Title)
		b.WriteString(`,"description":`)
		appendJSONString(&b, l.Description)
		b.WriteByte('}')
	}
	b.WriteString("}}")
	return &landing{page: page, data: b.Bytes()}, nil
}

// newReference renders the API reference's page for the OpenAPI document.
func newReference() (*staticPage, error) {
	return newStaticPage(referenceFiles, "reference", contract.ReferenceAssetsPath, map[string]any{"Document": "/v1/openapi.json"})
}

// landingRoutes routes the landing page and the API reference with its
// assets: no key (they hold no data), limited per client IP.
func (s *server) landingRoutes(r chi.Router) {
	for _, p := range contract.LandingPaths {
		getHead(r, p, s.ipLimited(http.HandlerFunc(s.serveLanding)))
	}
	getHead(r, contract.ReferencePath, s.ipLimited(http.HandlerFunc(s.reference.servePage)))
	getHead(r, contract.ReferenceAssetsPath+"/*", s.ipLimited(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.reference.serveAsset(w, r, s.notFound)
	})))
}

// serveLanding answers the landing page: HTML to a client that prefers it
// to JSON (a browser), else the envelope, as everywhere else in the API.
// It takes no query parameters, like every other endpoint.
func (s *server) serveLanding(w http.ResponseWriter, r *http.Request) {
	if _, err := contract.Parse(r.URL.RawQuery, nil); err != nil {
		s.writeError(w, r, err)
		return
	}
	h := w.Header()
	h["Vary"] = append(h["Vary"][:len(h["Vary"]):len(h["Vary"])], "Accept")
	if prefersHTML(r.Header.Values("Accept")) {
		s.landing.page.servePage(w, r)
		return
	}
	s.writeSuccess(w, r, success{data: s.landing.data, cache: cacheLanding})
}

// prefersHTML reports whether an Accept header ranks HTML (text/html or
// application/xhtml+xml) above JSON. Each type takes the quality of the
// most specific range that matches it (RFC 9110 §12.5.1); a tie, no Accept
// at all (curl, most HTTP libraries) and */* give JSON, the API's own type;
// a browser's navigation, which lists text/html before */*;q=0.8, gets HTML.
func prefersHTML(accept []string) bool {
	html := max(acceptQuality(accept, "text", "html"), acceptQuality(accept, "application", "xhtml+xml"))
	return html > acceptQuality(accept, "application", "json")
}

// acceptQuality is the quality an Accept header gives to typ/sub, from 0 to
// 1000 (the q-value in thousandths); a range with a malformed q counts as 0.
func acceptQuality(accept []string, typ, sub string) int {
	best, q := -1, 0 // specificity of the best match: */* 0, typ/* 1, typ/sub 2
	for _, header := range accept {
		for item := range strings.SplitSeq(header, ",") {
			mediaRange, params, _ := strings.Cut(item, ";")
			t, s, ok := strings.Cut(strings.ToLower(strings.TrimSpace(mediaRange)), "/")
			if !ok {
				continue
			}
			var spec int
			switch {
			case t == typ && s == sub:
				spec = 2
			case t == typ && s == "*":
				spec = 1
			case t == "*" && s == "*":
				spec = 0
			default:
				continue
			}
			if spec > best {
				best, q = spec, qValue(params)
			}
		}
	}
	return q
}

// qValue reads the q parameter of a media range's parameters: 1000 when it
// is absent, 0 when it is malformed.
func qValue(params string) int {
	for p := range strings.SplitSeq(params, ";") {
		name, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !strings.EqualFold(strings.TrimSpace(name), "q") {
			continue
		}
		v = strings.TrimSpace(v)
		whole, frac, _ := strings.Cut(v, ".")
		if len(frac) > 3 || (whole != "0" && whole != "1") || strings.Trim(frac, "0123456789") != "" {
			return 0
		}
		if whole == "1" {
			if strings.Trim(frac, "0") != "" {
				return 0
			}
			return 1000
		}
		n, _ := strconv.Atoi((frac + "000")[:3])
		return n
	}
	return 1000
}
