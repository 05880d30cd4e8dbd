package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph/keys"
)

// gqlResponse is a /graphql answer.
type gqlResponse struct {
	Data   json.RawMessage `json:"data"`
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	} `json:"errors"`
}

// postGraphQL posts body to /graphql with key.
func (p *process) postGraphQL(t testing.TB, key string, body []byte) (*response, gqlResponse) {
	t.Helper()
	r, err := send(p.base, http.MethodPost, "/graphql", key, body, map[string]string{"Content-Type": "application/json"})
	if err != nil {
		t.Fatalf("POST /graphql: %v", err)
	}
	checkNoLeak(t, "POST /graphql", r)
	var g gqlResponse
	_ = json.Unmarshal(r.body, &g)
	return r, g
}

// postRaw posts body to path over a connection of its own, reading the
// answer while the body is still being written: a server that refuses a
// large body answers early and then closes the connection, resetting it if
// the body keeps coming, which would make a client that first writes the
// whole body lose the answer.
func (p *process) postRaw(t testing.TB, path, key string, body []byte) (*response, gqlResponse) {
	t.Helper()
	conn, err := net.Dial("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute))
	go func() {
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: feedapi\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, key, len(body))
		conn.Write(body) // may fail once the server has answered
	}()
	hr, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer hr.Body.Close()
	r := &response{status: hr.StatusCode, header: hr.Header}
	if r.body, err = io.ReadAll(hr.Body); err != nil {
		t.Fatalf("POST %s: read the answer: %v", path, err)
	}
	checkNoLeak(t, "POST "+path, r)
	var g gqlResponse
	_ = json.Unmarshal(r.body, &g)
	return r, g
}

// TestRequestLimits checks that the service refuses requests that are too
// large or too slow before they cost much: an oversized header, an
// oversized /graphql body, a query over the parser's token limit, and a
// client that sends its headers too slowly (slowloris).
func TestRequestLimits(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)
	internal, _ := newKey(t, bdb, db.TierInternal)
	p := startServer(t, map[string]string{"DATABASE_URL": dbURL, "FEEDAPI_RATE_LIMIT": "100000"})

	t.Run("a small GraphQL query is served", func(t *testing.T) {
		t.Parallel()
		r, g := p.postGraphQL(t, internal, []byte(`{"query":"{ health { status } }"}`))
		if r.status != http.StatusOK || len(g.Errors) > 0 {
			t.Errorf("%d %s", r.status, r.body)
		}
	})

	t.Run("an oversized header gets 431", func(t *testing.T) {
		t.Parallel()
		r, err := send(p.base, http.MethodGet, "/v1/health", "", nil, map[string]string{"X-Padding": strings.Repeat("a", 32<<10)})
		if err != nil {
			t.Fatal(err)
		}
		if r.status != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("status %d, want 431", r.status)
		}
	})

	t.Run("an oversized GraphQL body gets 413 bad_request", func(t *testing.T) {
		t.Parallel()
		pad := strings.Repeat("x", 1<<20)
		for _, tc := range []struct {
			name string
			body string
		}{
			{"a padded variable", `{"query":"{ health { status } }","variables":{"pad":"` + pad + `"}}`},
			{"an invalid document", `{"query":"` + pad + `"}`},
			{"just over 64 KiB", `{"query":"{ health { status } }","pad":"` + pad[:64<<10] + `"}`},
		} {
			r, g := p.postRaw(t, "/graphql", internal, []byte(tc.body))
			if r.status != http.StatusRequestEntityTooLarge || len(g.Errors) != 1 || g.Errors[0].Extensions["code"] != "bad_request" ||
				r.header.Get("Content-Type") != "application/json; charset=utf-8" {
				t.Errorf("%s: %d %s %.300s, want 413 with extensions.code bad_request",
					tc.name, r.status, r.header.Get("Content-Type"), r.body)
			}
		}
	})

	t.Run("a malformed GraphQL body is a bad request", func(t *testing.T) {
		t.Parallel()
		r, g := p.postGraphQL(t, internal, []byte(`{"query": "{ health { status } }"`))
		if r.status != http.StatusBadRequest || len(g.Errors) != 1 || g.Errors[0].Extensions["code"] != "bad_request" {
			t.Errorf("%d %s, want 400 with extensions.code bad_request", r.status, r.body)
		}
	})

	t.Run("a query over the token limit is refused with bad_request", func(t *testing.T) {
		t.Parallel()
		query := "{ health { " + strings.Repeat("status ", 6000) + "} }"
		body, _ := json.Marshal(map[string]string{"query": query})
		r, g := p.postGraphQL(t, internal, body)
		if len(g.Errors) != 1 || g.Errors[0].Extensions["code"] != "bad_request" || r.status == http.StatusOK || len(g.Data) > 0 && string(g.Data) != "null" {
			t.Errorf("%d %.300s, want a refusal with extensions.code bad_request", r.status, r.body)
		}
	})

	t.Run("a client sending its headers too slowly is disconnected", func(t *testing.T) {
		t.Parallel()
		const readHeaderTimeout = 5 * time.Second // rest.NewServer's
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		closed := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(bufio.NewReader(conn))
			closed <- err
		}()
		header := "GET /v1/health HTTP/1.1\r\nHost: feedapi\r\nX-Slow: " + strings.Repeat("s", 200) + "\r\n\r\n"
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case err := <-closed:
				after := time.Since(start)
				t.Logf("disconnected after %s, %d header bytes sent (err %v)", after.Round(time.Millisecond), i, err)
				if after < readHeaderTimeout-time.Second || after > readHeaderTimeout+5*time.Second {
					t.Errorf("disconnected after %s, want about %s", after, readHeaderTimeout)
				}
				return
			case <-tick.C:
				if i >= len(header) {
					t.Fatal("the whole header was sent slowly and the connection is still open")
				}
				if _, err := conn.Write([]byte{header[i]}); err != nil && !errors.Is(err, net.ErrClosed) {
					// The server closed first; the reader reports it.
					continue
				}
			}
		}
	})
}

// TestSecretsStayOutOfLogs serves good, bad and malformed keys, in headers
// and where they do not belong, at the most verbose log level, and checks
// that no key (nor anything shaped like one) reaches the log or a response.
func TestSecretsStayOutOfLogs(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)
	free, _ := newKey(t, bdb, db.TierFree)
	internal, _ := newKey(t, bdb, db.TierInternal)
	revoked, revokedID := newKey(t, bdb, db.TierPro)
	if _, err := keys.NewService(bdb, keys.Options{}).Revoke(t.Context(), fmt.Sprint(revokedID)); err != nil {
		t.Fatal(err)
	}
	unknown := keys.Prefix + strings.Repeat("a", len(free)-len(keys.Prefix))
	malformed := keys.Prefix + "not-a-key"
	p := startServer(t, map[string]string{"DATABASE_URL": dbURL, "FEEDAPI_LOG_LEVEL": "debug"})

	requests := []struct {
		path, key string
		want      int
	}{
		{"/v1/posts?limit=1", free, http.StatusOK},
		{"/v1/posts?limit=1", unknown, http.StatusUnauthorized},
		{"/v1/posts?limit=1", malformed, http.StatusUnauthorized},
		{"/v1/posts?limit=1", revoked, http.StatusUnauthorized},
		{"/v1/posts?cursor=" + free, free, http.StatusBadRequest},
		{"/v1/posts?limit=" + unknown, free, http.StatusBadRequest},
		{"/graphql", free, http.StatusForbidden},
		{"/v1/posts/99999999999", internal, http.StatusNotFound},
		{"/v1/" + free, free, http.StatusNotFound},
	}
	for _, rq := range requests {
		r, err := send(p.base, http.MethodGet, rq.path, rq.key, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.status != rq.want {
			t.Errorf("GET %s: %d %s, want %d", rq.path, r.status, r.body, rq.want)
		}
		if strings.Contains(rq.path, keys.Prefix) {
			// The client's own text may be echoed back to it in a
			// message; nothing else may.
			r.body = []byte(strings.NewReplacer(free, "", unknown, "").Replace(string(r.body)))
		}
		checkNoLeak(t, "GET "+rq.path, r)
	}
	for _, q := range []string{
		`{"query":"{ posts(first: 1) { nodes { id } } }"}`,
		`{"query":"{ posts(after: \"` + internal + `\") { nodes { id } } }"}`,
		`{"query":"{ nope }"}`,
		`{"query":"{ posts(after: \"` + internal + `\") { nodes { id } } }"`,
	} {
		r, _ := p.postGraphQL(t, internal, []byte(q))
		if r.status >= 500 {
			t.Errorf("POST /graphql %s: %d %s", q, r.status, r.body)
		}
	}

	// Everything is logged by the time the responses are out, but give a
	// loaded machine a moment to flush the pipe.
	time.Sleep(100 * time.Millisecond)
	logs := p.stderr.String()
	for name, secret := range map[string]string{"free": free, "internal": internal, "revoked": revoked, "unknown": unknown, "malformed": malformed} {
		if strings.Contains(logs, secret) {
			t.Errorf("the %s key appears in the log", name)
		}
	}
	if strings.Contains(logs, keys.Prefix) {
		t.Errorf("something shaped like a key (%q…) appears in the log:\n%s", keys.Prefix, logs)
	}
	if !strings.Contains(logs, `"msg":"request"`) {
		t.Errorf("no request log lines at debug level; the test proves nothing:\n%s", logs)
	}
}

// TestGraphQLResponseCapFlag: FEEDAPI_GRAPHQL_MAX_RESPONSE_BYTES reaches
// /graphql, whose larger answers become one error naming the limit.
func TestGraphQLResponseCapFlag(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)
	internal, _ := newKey(t, bdb, db.TierInternal)
	p := startServer(t, map[string]string{"DATABASE_URL": dbURL, "FEEDAPI_GRAPHQL_MAX_RESPONSE_BYTES": "3000"})
	r, g := p.postGraphQL(t, internal, []byte(`{"query":"{ posts(first: 50) { nodes { id body } } }"}`))
	if r.status != http.StatusOK || len(g.Errors) != 1 || g.Errors[0].Extensions["code"] != "bad_request" ||
		g.Errors[0].Message != "the response is larger than the limit of 3000 bytes; ask for fewer items or fields" {
		t.Errorf("%d %s, want one bad_request naming the limit of 3000 bytes", r.status, r.body)
	}
	if r, g := p.postGraphQL(t, internal, []byte(`{"query":"{ posts(first: 2) { nodes { id } } }"}`)); len(g.Errors) > 0 {
		t.Errorf("a small answer: %d %s", r.status, r.body)
	}
}
