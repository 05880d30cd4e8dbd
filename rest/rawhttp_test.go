package rest

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/rest/envelope"
)

// TestNosniffOnEveryResponse: every answer of the handler, whatever its
// status or type, carries X-Content-Type-Options: nosniff (checkInvariants
// checks it on every response of every test; these are the kinds of answer
// the issue lists).
func TestNosniffOnEveryResponse(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	etag := a.get(t, "/v1/posts?limit=1", a.free).Header.Get("Etag")
	for _, tc := range []struct {
		name, method, path, key string
		header                  []string
		status                  int
	}{
		{"health", "GET", "/v1/health", "", nil, 200},
		{"openapi.json", "GET", "/v1/openapi.json", "", nil, 200},
		{"a page", "GET", "/v1/posts?limit=1", a.free, nil, 200},
		{"HEAD", "HEAD", "/v1/posts?limit=1", a.free, nil, 200},
		{"304", "GET", "/v1/posts?limit=1", a.free, []string{"If-None-Match", etag}, 304},
		{"400", "GET", "/v1/posts?limit=0", a.free, nil, 400},
		{"401", "GET", "/v1/posts", "", nil, 401},
		{"403", "POST", "/graphql", a.free, []string{"Content-Type", "application/json"}, 403},
		{"404 unknown path", "GET", "/v1/nope", a.free, nil, 404},
		{"404 missing post", "GET", "/v1/posts/999999999", a.free, nil, 404},
		{"405", "DELETE", "/v1/posts", a.free, nil, 405},
		{"GraphiQL page", "GET", "/graphql", "", []string{"Accept", "text/html"}, 200},
		{"/graphql", "GET", "/graphql?query=%7Bhealth%7Bstatus%7D%7D", a.intern, nil, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := a.do(t, tc.method, tc.path, tc.key, nil, tc.header...)
			r.wantStatus(t, tc.status)
			if got := r.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q, want nosniff", got)
			}
		})
	}
}

// rawExchange sends raw bytes to addr over a connection of its own and
// reads one response.
func rawExchange(t *testing.T, addr, raw string) (*http.Response, []byte) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute))
	go conn.Write([]byte(raw)) //nolint:errcheck // the server may answer and close before all is written
	hr, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	defer hr.Body.Close()
	body, _ := io.ReadAll(hr.Body)
	return hr, body
}

// TestErrorsBeforeTheHandler sends what net/http refuses before or around
// the handler over raw TCP to NewServer's server. Where the server lets the
// handler answer (a header between MaxHeaderBytes and net/http's own limit,
// OPTIONS *), the answer is the JSON envelope with nosniff; the rest is
// net/http's text/plain, which nothing short of rewriting the connection's
// bytes can change (documented in the README), checked here so that a Go
// release that adds a hook shows up.
func TestErrorsBeforeTheHandler(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer("", a.handler, 0)
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	addr := ln.Addr().String()
	pad := func(n int) string { return "X-Pad: " + strings.Repeat("a", n) + "\r\n" }

	for _, tc := range []struct {
		name   string
		raw    string
		status int
		json   bool // the error envelope, else net/http's text/plain
	}{
		{"header over the limit", "GET /v1/health HTTP/1.1\r\nHost: feedapi\r\n" + pad(20<<10) + "\r\n", 431, true},
		{"header just over the limit", "GET /v1/posts HTTP/1.1\r\nHost: feedapi\r\n" + pad(MaxHeaderBytes-40) + "\r\n", 431, true},
		{"OPTIONS *", "OPTIONS * HTTP/1.1\r\nHost: feedapi\r\n\r\n", 404, true},
		{"header over net/http's limit", "GET /v1/health HTTP/1.1\r\nHost: feedapi\r\n" + pad(serverHeaderBytes+8<<10) + "\r\n", 431, false},
		{"bad request line", "GARBAGE\r\n\r\n", 400, false},
		{"duplicate Host", "GET /v1/health HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, false},
		{"missing Host", "GET /v1/health HTTP/1.1\r\n\r\n", 400, false},
		{"invalid header name", "GET /v1/health HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n", 400, false},
		{"HTTP/2.0 as text", "GET /v1/health HTTP/2.0\r\nHost: a\r\n\r\n", 505, false},
		{"unknown transfer coding", "GET /v1/health HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: zstd\r\n\r\n", 501, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hr, body := rawExchange(t, addr, tc.raw)
			if hr.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %.200s", hr.StatusCode, tc.status, body)
			}
			ct := hr.Header.Get("Content-Type")
			if !tc.json {
				if !strings.HasPrefix(ct, "text/plain") {
					t.Errorf("Content-Type %q: net/http's own answer changed; update NewServer's doc and the README", ct)
				}
				return
			}
			if ct != envelope.ContentTypeJSON || hr.Header.Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("Content-Type %q, X-Content-Type-Options %q; want %q and nosniff", ct, hr.Header.Get("X-Content-Type-Options"), envelope.ContentTypeJSON)
			}
			var env struct {
				Error struct{ Code, Message string } `json:"error"`
				Meta  struct {
					RequestID string `json:"request_id"`
				} `json:"meta"`
			}
			if err := json.Unmarshal(body, &env); err != nil || env.Error.Code == "" || env.Meta.RequestID == "" {
				t.Errorf("not the error envelope (%v): %.300s", err, body)
			}
			if tc.status == 431 && (env.Error.Code != "bad_request" || !strings.Contains(env.Error.Message, "header")) {
				t.Errorf("error %+v, want bad_request about the header", env.Error)
			}
		})
	}
}
