// Package static serves the HTML pages of the service that hold no data
// (the landing page, the API reference, GraphiQL, the dashboard): each page
// rendered once from its embedded template, with its embedded assets, both
// under strong ETags. Each page's files and constructor live in a package
// of their own beside it (rest/landing, rest/reference, rest/graphiql,
// rest/dashboard).
package static

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

// Page serves an HTML page and its embedded assets: no CDN, so the
// page works offline. The pages hold no data and need no key: they ask for
// one and send it with the queries they make.
type Page struct {
	page       []byte
	etag       string // the page's strong validator
	assetsPath string
	assets     map[string]asset // by file name
}

// asset is one embedded file and its strong validator.
type asset struct {
	body []byte
	etag string
}

// New renders dir/index.html of files with its assets' path as
// .Assets and the fields of data, and holds dir's other files as the
// assets served under assetsPath.
func New(files embed.FS, name, dir, assetsPath string, data map[string]any) (*Page, error) {
	tmpl, err := template.ParseFS(files, path.Join(dir, "index.html"))
	if err != nil {
		return nil, fmt.Errorf("%s page: %w", name, err)
	}
	vars := map[string]any{"Assets": assetsPath}
	for k, v := range data {
		vars[k] = v
	}
	var page bytes.Buffer
	if err := tmpl.Execute(&page, vars); err != nil {
		return nil, fmt.Errorf("%s page: %w", name, err)
	}
	p := &Page{page: page.Bytes(), etag: fileETag(page.Bytes()), assetsPath: assetsPath, assets: map[string]asset{}}
	err = fs.WalkDir(files, dir, func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(name) == ".html" {
			return err
		}
		b, err := files.ReadFile(name)
		p.assets[path.Base(name)] = asset{body: b, etag: fileETag(b)}
		return err
	})
	return p, err
}

// fileETag is the validator of an embedded file.
func fileETag(b []byte) string {
	sum := sha256.Sum256(b)
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// ServePage writes the page.
func (p *Page) ServePage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	h.Set("Etag", p.etag)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(p.page))
}

// ServeAsset writes one asset, or the JSON 404 for a name it does not have.
// Names carry versions (or are feedapi's own, small and revalidated), so the
// versioned ones are cached for a year; a strong ETag answers revalidations
// with 304.
func (p *Page) ServeAsset(w http.ResponseWriter, r *http.Request, notFound http.HandlerFunc) {
	name := strings.TrimPrefix(r.URL.Path, p.assetsPath+"/")
	a, ok := p.assets[name]
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
