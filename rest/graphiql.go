package rest

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
	"time"
)

// graphiqlFiles are the GraphiQL page and its assets (rest/graphiql/README.md
// says which packages and versions, and how to upgrade them).
//
//go:embed graphiql/index.html graphiql/*.js graphiql/*.css
var graphiqlFiles embed.FS

// graphiqlAssetsPath is where the page's scripts and styles are served.
const graphiqlAssetsPath = "/graphql/assets"

// graphiql serves the GraphiQL page and its embedded assets: no CDN, so the
// page works offline.
type graphiql struct {
	page   []byte
	assets map[string]asset // by file name
}

// asset is one embedded file and its strong validator.
type asset struct {
	body []byte
	etag string
}

func newGraphiQL() (*graphiql, error) {
	tmpl, err := template.ParseFS(graphiqlFiles, "graphiql/index.html")
	if err != nil {
		return nil, fmt.Errorf("graphiql page: %w", err)
	}
	var page bytes.Buffer
	if err := tmpl.Execute(&page, struct{ Assets string }{graphiqlAssetsPath}); err != nil {
		return nil, fmt.Errorf("graphiql page: %w", err)
	}
	g := &graphiql{page: page.Bytes(), assets: map[string]asset{}}
	err = fs.WalkDir(graphiqlFiles, "graphiql", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) == ".html" {
			return err
		}
		b, err := graphiqlFiles.ReadFile(p)
		sum := sha256.Sum256(b)
		g.assets[path.Base(p)] = asset{body: b, etag: `"` + hex.EncodeToString(sum[:16]) + `"`}
		return err
	})
	return g, err
}

// servePage writes the page. It holds no data, so it needs no key.
func (g *graphiql) servePage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(g.page))
}

// serveAsset writes one asset, or the JSON 404 for a name it does not have.
// Names carry versions (or are feedapi's own, small and revalidated), so the
// versioned ones are cached for a year; a strong ETag answers revalidations
// with 304.
func (g *graphiql) serveAsset(w http.ResponseWriter, r *http.Request, notFound http.HandlerFunc) {
	name := strings.TrimPrefix(r.URL.Path, graphiqlAssetsPath+"/")
	a, ok := g.assets[name]
	if !ok {
		notFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", mime.TypeByExtension(path.Ext(name)))
	h.Set("Etag", a.etag)
	if strings.HasPrefix(name, "feedapi-") {
		h.Set("Cache-Control", "no-cache")
	} else {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}
