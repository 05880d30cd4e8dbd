// Package landing is the landing page of GET / and /v1 in its two forms:
// HTML for a browser, rendered from index.html beside this file, and the
// JSON value of the envelope's data for every other client; both say what
// the service is and link to the health, the OpenAPI document, the API
// reference and GraphiQL (contract.LandingLinks).
package landing

import (
	"bytes"
	"embed"
	"strconv"
	"strings"

	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/envelope"
	"github.com/feedapi/feedapi/rest/static"
)

// Description says what the service is, on the page and in its JSON.
const Description = "A read-only JSON API of a curated crypto news feed, weekly briefs in Markdown, the raw news firehose split into panes and, where the deployment offers them, daily US spot-ETF flows: polled on /v1, streamed (server-sent events) and subscribed (GraphQL)."

// Cache is the Cache-Control of both forms of the landing page:
// revalidated with their ETags, so that a new build's links show at once.
const Cache = "no-cache"

// files is the landing page's template.
//
//go:embed index.html
var files embed.FS

// Landing is the landing page in its two forms.
type Landing struct {
	Page *static.Page
	Data []byte // the JSON value of the envelope's data
}

// New renders the landing page's two forms.
func New() (*Landing, error) {
	page, err := static.New(files, "landing", ".", "", map[string]any{
		"Description": Description, "Links": contract.LandingLinks})
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"name":"feedapi","description":`)
	envelope.AppendJSONString(&b, Description)
	b.WriteString(`,"links":{`)
	for i, l := range contract.LandingLinks {
		if i > 0 {
			b.WriteByte(',')
		}
		envelope.AppendJSONString(&b, l.Rel)
		b.WriteString(`:{"href":`)
		envelope.AppendJSONString(&b, l.Href)
		b.WriteString(`,"title":`)
		envelope.AppendJSONString(&b, l.Title)
		b.WriteString(`,"description":`)
		envelope.AppendJSONString(&b, l.Description)
		b.WriteByte('}')
	}
	b.WriteString("}}")
	return &Landing{Page: page, Data: b.Bytes()}, nil
}

// PrefersHTML reports whether an Accept header ranks HTML (text/html or
// application/xhtml+xml) above JSON. Each type takes the quality of the
// most specific range that matches it (RFC 9110 §12.5.1); a tie, no Accept
// at all (curl, most HTTP libraries) and */* give JSON, the API's own type;
// a browser's navigation, which lists text/html before */*;q=0.8, gets HTML.
func PrefersHTML(accept []string) bool {
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
