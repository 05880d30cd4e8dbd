package envelope

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zeebo/xxh3"
)

// ContentTypeJSON is the Content-Type of every response.
const ContentTypeJSON = "application/json; charset=utf-8"

// Cache-Control values.
const (
	CacheKeyed   = "private, no-cache" // per-key data: revalidate with the ETag
	CacheNone    = "no-store"          // errors and health
	CachePublic  = "public, max-age=300"
	RetryAfter   = "60" // Retry-After of a 429, in seconds
	authenticate = `Bearer realm="feedapi"`
)

// Writer writes envelopes into pooled buffers and sends them; errors that
// are not shown to clients are logged to its logger with the request id.
type Writer struct {
	log   *slog.Logger
	bufs  bufferPool
	gzips gzipPool
}

// New returns a Writer logging to log.
func New(log *slog.Logger) *Writer { return &Writer{log: log} }

// Buffer returns a pooled buffer; Send takes it back, or Release.
func (e *Writer) Buffer() *bytes.Buffer { return e.bufs.get() }

// Release gives buf back to the pool.
func (e *Writer) Release(buf *bytes.Buffer) { e.bufs.put(buf) }

// gzipMinSize is the smallest body worth compressing: below it the gzip
// header and trailer eat most of the gain.
const gzipMinSize = 1024

// maxPooledBuffer bounds the buffers kept for reuse, so one huge response
// does not pin its memory.
const maxPooledBuffer = 1 << 20

// bufferPool recycles response buffers.
type bufferPool struct{ p sync.Pool }

func (b *bufferPool) get() *bytes.Buffer {
	if v, ok := b.p.Get().(*bytes.Buffer); ok {
		return v
	}
	return bytes.NewBuffer(make([]byte, 0, 8<<10))
}

func (b *bufferPool) put(buf *bytes.Buffer) {
	if buf.Cap() > maxPooledBuffer {
		return
	}
	buf.Reset()
	b.p.Put(buf)
}

// gzipLevel is the compression level of responses: BestSpeed. On JSON
// pages it costs far less CPU than the default level for a body only
// slightly larger, and the CPU is what a small replica runs out of first.
const gzipLevel = gzip.BestSpeed

// gzipPool recycles gzip writers, each of which holds a large compressor
// state.
type gzipPool struct{ p sync.Pool }

func (g *gzipPool) get(w io.Writer) *gzip.Writer {
	if z, ok := g.p.Get().(*gzip.Writer); ok {
		z.Reset(w)
		return z
	}
	z, _ := gzip.NewWriterLevel(w, gzipLevel) // the level is valid
	return z
}

func (g *gzipPool) put(z *gzip.Writer) { g.p.Put(z) }

// Send writes a complete JSON body held in buf (and gives buf back to the
// pool). On a 200 answer to GET or HEAD with tagged >= 0, the strong ETag
// is a hash of buf[:tagged], and a matching If-None-Match gives 304 with no
// body. The body is gzipped when the client accepts it and it is at least
// gzipMinSize; the gzipped representation's ETag carries a "-gz" suffix, as
// it is a different sequence of bytes. HEAD gets the same headers and no
// body.
func (e *Writer) Send(w http.ResponseWriter, r *http.Request, status int, buf *bytes.Buffer, tagged int, cacheControl string) {
	e.SendTyped(w, r, status, buf, tagged, "", cacheControl, ContentTypeJSON)
}

// ETagOf returns the hash of a representation that its ETag carries.
func ETagOf(b []byte) string {
	sum := xxh3.Hash128(b).Bytes()
	return hex.EncodeToString(sum[:])
}

// SendTyped is Send for a body of the given Content-Type, with the hash of
// buf[:tagged] given as tag (ETagOf), or "" to compute it.
func (e *Writer) SendTyped(w http.ResponseWriter, r *http.Request, status int, buf *bytes.Buffer, tagged int, tag, cacheControl, contentType string) {
	defer e.bufs.put(buf)
	body := buf.Bytes()
	zip := Headers(w, r, len(body), cacheControl, contentType)
	if tagged >= 0 && status == http.StatusOK && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		if tag == "" {
			tag = ETagOf(body[:tagged])
		}
		if notModified(w, r, tag, zip) {
			return
		}
	}
	h := w.Header()
	if zip {
		zbuf := e.bufs.get()
		defer e.bufs.put(zbuf)
		z := e.gzips.get(zbuf)
		_, _ = z.Write(body) // writes to a bytes.Buffer do not fail
		_ = z.Close()
		e.gzips.put(z)
		body = zbuf.Bytes()
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method != http.MethodHead {
		// The server's WriteTimeout counts from the request's headers, so
		// that time spent building the answer would come out of the time
		// to send it: give the body a deadline of its own, by its size.
		// Not supported (a test's recorder): the server's timeout holds.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(writeTime(len(body))))
	}
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body) // the client went away; nothing to do
	}
}

// Sending a body: at least minWriteTime, and the time to send it at
// minWriteRate. A client slower than that has its connection closed: it
// then holds fewer bytes than Content-Length, never a short body it could
// take for whole.
const (
	minWriteTime = 30 * time.Second
	minWriteRate = 64 << 10 // bytes per second
)

// writeTime is how long a body of n bytes may take to send.
func writeTime(n int) time.Duration {
	return minWriteTime + time.Duration(n)*time.Second/minWriteRate
}

// Headers sets the headers of a JSON answer of n bytes (before gzip) and
// reports whether it is to be gzipped.
func Headers(w http.ResponseWriter, r *http.Request, n int, cacheControl, contentType string) (zip bool) {
	h := w.Header()
	h["Content-Type"] = []string{contentType}
	h["Cache-Control"] = []string{cacheControl}
	setVary(h)
	return n >= gzipMinSize && acceptsGzip(r.Header.Values("Accept-Encoding"))
}

// varyAcceptEncoding is the Vary header of every answer (never modified).
var varyAcceptEncoding = []string{"Accept-Encoding"}

// setVary adds Accept-Encoding to the answer's Vary, after what the CORS
// handler put there (Origin, on every answer when origins are allowed):
// an answer depends on both.
func setVary(h http.Header) {
	v := h["Vary"]
	switch {
	case len(v) == 0:
		h["Vary"] = varyAcceptEncoding
	case !slices.Contains(v, "Accept-Encoding"):
		h["Vary"] = append(v[:len(v):len(v)], "Accept-Encoding")
	}
}

// notModified sets the ETag of the representation whose hash is tag (the
// gzipped one when zip) and, when If-None-Match names it, answers 304 and
// reports true.
func notModified(w http.ResponseWriter, r *http.Request, tag string, zip bool) bool {
	h := w.Header()
	if zip {
		h["Etag"] = []string{`"` + tag + `-gz"`} // canonical form of ETag
	} else {
		h["Etag"] = []string{`"` + tag + `"`}
	}
	if noneMatch := r.Header.Values("If-None-Match"); len(noneMatch) > 0 && etagMatches(noneMatch, tag) {
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	return false
}

// etagMatches reports whether an If-None-Match list names either
// representation of the resource whose tag is tag, or is "*". The
// comparison is weak, as RFC 9110 prescribes for If-None-Match.
func etagMatches(headers []string, tag string) bool {
	for _, header := range headers {
		for item := range strings.SplitSeq(header, ",") {
			item = strings.TrimSpace(item)
			if item == "*" {
				return true
			}
			item = strings.TrimPrefix(item, "W/")
			if len(item) < 2 || item[0] != '"' || item[len(item)-1] != '"' {
				continue
			}
			item = item[1 : len(item)-1]
			if item == tag || (strings.HasSuffix(item, "-gz") && item[:len(item)-3] == tag) {
				return true
			}
		}
	}
	return false
}

// acceptsGzip reports whether Accept-Encoding allows gzip: listed (or "*")
// with a non-zero quality, and not refused by name with q=0.
func acceptsGzip(headers []string) bool {
	gzipQ, starQ := -1.0, -1.0
	for _, header := range headers {
		for item := range strings.SplitSeq(header, ",") {
			name, params, _ := strings.Cut(item, ";")
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "gzip" && name != "x-gzip" && name != "*" {
				continue
			}
			q := 1.0
			for p := range strings.SplitSeq(params, ";") {
				k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(k), "q") {
					if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
						q = f
					}
				}
			}
			if name == "*" {
				starQ = max(starQ, q)
			} else {
				gzipQ = max(gzipQ, q)
			}
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return starQ > 0
}
