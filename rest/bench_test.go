package rest

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkEndpoints measures the REST layer with the database, in-process
// (no network): go test ./rest -run '^$' -bench Endpoints -benchmem
func BenchmarkEndpoints(b *testing.B) {
	a := newAPI(b, func(c *Config) { c.RateLimit, c.IPRateLimit = 1<<30, 1<<30 })
	for _, bc := range []struct{ name, path, enc string }{
		{"posts 50", "/v1/posts", ""},
		{"posts 100 raw gzip", "/v1/posts?limit=100&include_raw=true", "gzip"},
		{"post", "/v1/posts/1", ""},
		{"404", missingPost, ""},
		{"firehose 50 summary", "/v1/firehose?include_summary=true", ""},
		{"briefs", "/v1/briefs", ""},
		{"sources", "/v1/sources", ""},
		{"etf-flows 500", "/v1/etf-flows?limit=500", ""},
		{"health", "/v1/health", ""},
		{"400", "/v1/posts?limit=0", ""},
	} {
		b.Run(bc.name, func(b *testing.B) {
			req := httptest.NewRequest(http.MethodGet, bc.path, nil)
			req.Header.Set("Authorization", "Bearer "+a.free)
			if bc.enc != "" {
				req.Header.Set("Accept-Encoding", bc.enc)
			}
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				a.handler.ServeHTTP(w, req)
				if w.Code >= 500 {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
		})
	}
}
