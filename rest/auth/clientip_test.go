package auth

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestClientIP(t *testing.T) {
	t.Parallel()
	req := func(remote string, xff ...string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/v1/health", nil)
		r.RemoteAddr = remote
		for _, v := range xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		return r
	}
	direct, err := clientIPFunc(nil)
	if err != nil {
		t.Fatal(err)
	}
	proxied, err := clientIPFunc([]string{"10.0.0.0/8", "::1/128"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		fn   func(*http.Request) string
		req  *http.Request
		want string
	}{
		{"peer address", direct, req("203.0.113.7:5555"), "203.0.113.7"},
		{"X-Forwarded-For ignored without trusted proxies", direct, req("203.0.113.7:5555", "198.51.100.1"), "203.0.113.7"},
		{"IPv4-mapped IPv6 peer", direct, req("[::ffff:203.0.113.7]:1"), "203.0.113.7"},
		{"IPv6 peer", direct, req("[2001:db8::1]:1"), "2001:db8::1"},
		{"trusted proxy: the client before it", proxied, req("10.1.2.3:1", "198.51.100.1"), "198.51.100.1"},
		{"trusted chain walked from the right", proxied, req("10.1.2.3:1", "6.6.6.6, 198.51.100.1, 10.9.9.9"), "198.51.100.1"},
		{"several header lines", proxied, req("10.1.2.3:1", "6.6.6.6", "198.51.100.1"), "198.51.100.1"},
		{"untrusted peer: header ignored", proxied, req("203.0.113.7:1", "198.51.100.1"), "203.0.113.7"},
		{"garbage in the chain stops the walk", proxied, req("10.1.2.3:1", "198.51.100.1, junk"), "10.1.2.3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.fn(tc.req); got != tc.want {
				t.Errorf("client IP = %q, want %q", got, tc.want)
			}
		})
	}
	if _, err := clientIPFunc([]string{"10.0.0.0/33"}); err == nil {
		t.Errorf("an invalid trusted proxy prefix was accepted")
	}
}
