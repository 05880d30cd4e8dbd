package rest

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/feedapi/feedapi/graph"
	"github.com/feedapi/feedapi/rest/envelope"
)

// serveGraphQL runs the graph package's /graphql handler (behind the key,
// tier and rate-limit checks of its route), with the request id for its
// error log, and finishes its response like every other: JSON with the
// charset, gzip when it pays, Content-Length.
func (s *server) serveGraphQL(w http.ResponseWriter, r *http.Request) {
	if isLive(r) {
		s.serveLive(w, r)
		return
	}
	bw := &bufferedWriter{header: w.Header(), buf: s.env.Buffer()}
	r = r.WithContext(graph.WithRequestID(r.Context(), envelope.RequestID(r.Context())))
	s.graphql.ServeHTTP(bw, r)
	status := bw.status
	if status == 0 {
		status = http.StatusOK
	}
	contentType := w.Header().Get("Content-Type")
	if contentType == "" || strings.HasPrefix(contentType, "application/json") ||
		strings.HasPrefix(contentType, "application/graphql-response+json") {
		contentType = envelope.ContentTypeJSON
	}
	s.env.SendTyped(w, r, status, bw.buf, -1, "", envelope.CacheNone, contentType)
}

// bufferedWriter collects a handler's response so that it can be finished
// as a whole. Headers go straight to the real writer's map.
type bufferedWriter struct {
	header http.Header
	status int
	buf    *bytes.Buffer
}

func (b *bufferedWriter) Header() http.Header { return b.header }

func (b *bufferedWriter) WriteHeader(code int) {
	if b.status == 0 {
		b.status = code
	}
}

func (b *bufferedWriter) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.buf.Write(p)
}
