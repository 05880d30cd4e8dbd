package main

import (
	"encoding/json"
	"testing"

	"github.com/feedapi/feedapi/db/dbtest"
)

// TestOpenAPIServers checks that a client generated from the served document
// reaches the process that served it: without --public-url the servers are
// the address listened on; with it, the flags.
func TestOpenAPIServers(t *testing.T) {
	t.Parallel()
	_, dbURL := dbtest.NewWithURL(t)
	tests := []struct {
		name  string
		flags []string
		want  func(base string) []string
	}{
		{"the listen address by default", nil, func(base string) []string { return []string{base} }},
		{"the flags when set", []string{"--public-url", "https://news.example.com", "--alt-url", "https://alt.example.com"},
			func(string) []string { return []string{"https://news.example.com", "https://alt.example.com"} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := startServer(t, map[string]string{"DATABASE_URL": dbURL}, tt.flags...)
			r := p.get(t, "/v1/openapi.json", "")
			var doc struct {
				Servers []struct{ URL string } `json:"servers"`
			}
			if err := json.Unmarshal(r.body, &doc); err != nil {
				t.Fatalf("openapi.json: %v", err)
			}
			var got []string
			for _, s := range doc.Servers {
				got = append(got, s.URL)
			}
			want := tt.want(p.base)
			if len(got) != len(want) {
				t.Fatalf("servers %q, want %q", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("servers %q, want %q", got, want)
				}
			}
		})
	}
}

func TestServerURLs(t *testing.T) {
	tests := []struct {
		flags        serveFlags
		listen       string
		primary, alt string
	}{
		{serveFlags{}, "[::]:8080", "http://localhost:8080", "http://127.0.0.1:8080"},
		{serveFlags{}, "0.0.0.0:8080", "http://localhost:8080", "http://127.0.0.1:8080"},
		{serveFlags{}, "127.0.0.1:5210", "http://127.0.0.1:5210", ""},
		{serveFlags{AltURL: "https://alt.example.com"}, "127.0.0.1:5210", "http://127.0.0.1:5210", "https://alt.example.com"},
		{serveFlags{PublicURL: "https://news.example.com"}, "[::]:8080", "https://news.example.com", ""},
	}
	for _, tt := range tests {
		primary, alt := tt.flags.serverURLs(tt.listen)
		if primary != tt.primary || alt != tt.alt {
			t.Errorf("%+v on %s: got %q, %q; want %q, %q", tt.flags, tt.listen, primary, alt, tt.primary, tt.alt)
		}
	}
}
