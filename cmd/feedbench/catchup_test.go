package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// streamService mimics feedapi's firehose stream: messages at positions
// 1..total, message p created p minutes after start. A stream sends the
// messages after Last-Event-ID (or those created since `since`), then
// stays open as a live stream does, until the client goes; with failAfter
// set it sends an error event after that many messages and ends.
type streamService struct {
	total     int
	failAfter int
	start     time.Time

	mu      sync.Mutex
	resumes map[string]int // attack requests by Last-Event-ID
	marked  int            // requests that arrived with catchUpHeader
	open    int            // streams open now
}

func newStreamService(t *testing.T, total, failAfter int) (*httptest.Server, *streamService) {
	s := &streamService{total: total, failAfter: failAfter, start: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), resumes: map[string]int{}}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv, s
}

func (s *streamService) created(p int) time.Time { return s.start.Add(time.Duration(p) * time.Minute) }

func (s *streamService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer "+internalKey {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	switch r.URL.Path {
	case "/v1/sources":
		json.NewEncoder(w).Encode(data(obj{"curated_sources": []string{"Alpha"}, "firehose_oldest": s.created(1)}))
	case "/v1/firehose":
		json.NewEncoder(w).Encode(data([]obj{{"id": s.total, "created_at": s.created(s.total)}}))
	case "/v1/firehose/stream":
		s.stream(w, r)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func (s *streamService) stream(w http.ResponseWriter, r *http.Request) {
	from := 1
	if id := r.Header.Get("Last-Event-ID"); id != "" {
		n, err := strconv.Atoi(id)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		from = n + 1
	} else if since, err := time.Parse(time.RFC3339Nano, r.URL.Query().Get("since")); err == nil {
		for from <= s.total && s.created(from).Before(since) {
			from++
		}
	}
	s.mu.Lock()
	if r.Header.Get("X-Vegeta-Attack") != "" {
		s.resumes[r.Header.Get("Last-Event-ID")]++
	}
	if r.Header.Get(catchUpHeader) != "" {
		s.marked++
	}
	s.open++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.open--
		s.mu.Unlock()
	}()

	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for p := from; p <= s.total; p++ {
		if s.failAfter > 0 && p-from == s.failAfter {
			fmt.Fprint(w, "event: error\ndata: {\"error\":{\"code\":\"slow_reader\"}}\n\n")
			return
		}
		fmt.Fprintf(w, "event: firehose_message\nid: %d\ndata: {\"id\":%d}\n\n", p, p)
	}
	fmt.Fprint(w, ": heartbeat\n\n")
	w.(http.Flusher).Flush()
	<-r.Context().Done()
}

// The deep catch-up resumes from the first 50 positions since the oldest
// message and each request ends once its 100 messages are read, though
// the stream stays open: every request is a 200, none hangs to the
// timeout, the marker header never reaches the server, and no stream is
// left open.
func TestCatchUpReadsItsItemsThenCloses(t *testing.T) {
	srv, s := newStreamService(t, 400, 0)
	rep, _ := bench(t, srv, "--key", internalKey, "--workers", "2", "--duration", "5s", "--max-requests", "60", "--timeout", "30s",
		"--scenarios", "firehose-stream-catchup-oldest")
	r := rowOf(t, rep, "firehose-stream-catchup-oldest")
	if r.Requests != 60 || r.Codes["200"] != 60 {
		t.Errorf("requests %d, codes %s: want 60 answered 200", r.Requests, formatCodes(r.Codes))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	resumed := 0
	for id, n := range s.resumes {
		p, err := strconv.Atoi(id)
		if err != nil || p < 1 || p > catchUpResumes {
			t.Errorf("resumed from Last-Event-ID %q, want one of the first %d positions", id, catchUpResumes)
		}
		resumed += n
	}
	if resumed != 60 || len(s.resumes) != catchUpResumes {
		t.Errorf("%d resumes over %d positions, want 60 over %d (round-robin)", resumed, len(s.resumes), catchUpResumes)
	}
	if s.marked != 0 {
		t.Errorf("%d requests reached the server with %s", s.marked, catchUpHeader)
	}
	deadline := time.Now().Add(10 * time.Second)
	for s.open > 0 && time.Now().Before(deadline) {
		s.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		s.mu.Lock()
	}
	if s.open != 0 {
		t.Errorf("%d streams still open after the run", s.open)
	}
}

// The recent catch-up widens its span before the newest message until the
// stream has enough positions: an hour holds 60 messages here, too few;
// six hours hold all 400, and the resumes are their first 50.
func TestRecentCatchUpWidensItsSpan(t *testing.T) {
	srv, s := newStreamService(t, 400, 0)
	rep, _ := bench(t, srv, "--key", internalKey, "--workers", "1", "--duration", "5s", "--max-requests", "5", "--timeout", "30s",
		"--scenarios", "firehose-stream-catchup")
	if r := rowOf(t, rep, "firehose-stream-catchup"); r.Codes["200"] != 5 {
		t.Errorf("codes %s, want 5 answered 200", formatCodes(r.Codes))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	first := 400 - 6*60 // created at or after six hours before the newest (minute 400)
	for id := range s.resumes {
		if p, _ := strconv.Atoi(id); p < first || p >= first+catchUpResumes {
			t.Errorf("resumed from %s, want the first %d positions of the last six hours (%d on)", id, catchUpResumes, first)
		}
	}
}

// A catch-up cut short by an error event is a failure, not a fast answer;
// so is a stream that ends in one while its positions are discovered.
func TestCatchUpCutShortFails(t *testing.T) {
	srv, _ := newStreamService(t, 400, 10)
	client := newClient(30*time.Second, 2)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/v1/firehose/stream", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+internalKey)
	req.Header.Set("Last-Event-ID", "1")
	req.Header.Set(catchUpHeader, "100")
	res, err := client.Do(req)
	if err == nil {
		res.Body.Close()
		t.Fatalf("a catch-up cut short after 10 messages: %d, want an error", res.StatusCode)
	}
	if !strings.Contains(err.Error(), "10 of 100 items") || !strings.Contains(err.Error(), "slow_reader") {
		t.Errorf("error %q, want it to say 10 of 100 items and the error event", err)
	}
	base, _ := url.Parse(srv.URL)
	d := newDiscovery(client, base, internalKey, scenarioOptions{})
	if _, err := prepCatchUp(oldestStarts)(t.Context(), d); err == nil || !strings.Contains(err.Error(), "slow_reader") {
		t.Errorf("positions from a stream that ends in an error event: %v, want the error", err)
	}
}
