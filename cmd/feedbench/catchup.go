package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// A stream's catch-up is a client that reconnects with Last-Event-ID and
// reads what it missed from the database before the stream goes live. A
// stream never ends by itself, so vegeta (which reads every answer to its
// end) cannot time it as it is: the catch-up scenarios mark their requests
// with catchUpHeader, and catchUpTransport answers those once the stream has
// sent that many items, so that a request's latency is the time from the
// reconnect to the last item of the catch-up.

const (
	// catchUpHeader carries, on a catch-up request, how many items end it.
	// catchUpTransport removes it before the request leaves.
	catchUpHeader = "X-Feedbench-Catch-Up"
	// catchUpItems is how many items a catch-up reads: one read of the
	// stream's database batch.
	catchUpItems = 100
	// catchUpResumes is how many positions a catch-up scenario resumes
	// from, round-robin, each with at least catchUpItems items after it.
	catchUpResumes = 50
)

// catchUpTransport ends catch-up requests (those carrying catchUpHeader)
// after their items; it passes every other request through unchanged.
type catchUpTransport struct{ next http.RoundTripper }

// RoundTrip implements http.RoundTripper. A catch-up whose stream ends or
// sends an error event before its items is an error, so that it counts as
// a failure and not as a fast answer.
func (c catchUpTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	want, err := strconv.Atoi(req.Header.Get(catchUpHeader))
	if err != nil {
		return c.next.RoundTrip(req)
	}
	req = req.Clone(req.Context())
	req.Header.Del(catchUpHeader)
	res, err := c.next.RoundTrip(req)
	if err != nil || res.StatusCode != http.StatusOK {
		return res, err
	}
	defer res.Body.Close()
	got, err := readEvents(res.Body, want, nil)
	if err != nil {
		return nil, fmt.Errorf("stream catch-up: %d of %d items: %w", got, want, err)
	}
	res.Body = io.NopCloser(strings.NewReader(strconv.Itoa(got) + " items\n"))
	res.ContentLength = -1
	return res, nil
}

// errStreamError is an `event: error` in a stream.
var errStreamError = errors.New("error event")

// readEvents reads a stream's events until it has seen want items (events
// other than error), calling onItem with each item's event id when onItem
// is set. An error event or the end of the stream before that is an error.
func readEvents(r io.Reader, want int, onItem func(id string)) (items int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var event, id string
	var data []byte
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			switch {
			case event == "error":
				return items, fmt.Errorf("%w: %s", errStreamError, data)
			case event != "":
				items++
				if onItem != nil {
					onItem(id)
				}
				if items >= want {
					return items, nil
				}
			}
			event, id, data = "", "", data[:0]
		case bytes.HasPrefix(line, []byte("event: ")):
			event = string(line[len("event: "):])
		case bytes.HasPrefix(line, []byte("id: ")):
			id = string(line[len("id: "):])
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data[:0], line[len("data: "):]...)
		}
	}
	if err := sc.Err(); err != nil {
		return items, err
	}
	return items, io.ErrUnexpectedEOF
}

// prepCatchUp returns a catch-up scenario that resumes the firehose stream
// from positions found by opening it with since set to each of starts(d) in
// turn, until one sends enough: the event ids of the first catchUpResumes
// items it sends, each followed by at least catchUpItems more.
func prepCatchUp(starts func(ctx context.Context, d *discovery) ([]time.Time, error)) func(context.Context, *discovery) (nextFunc, error) {
	return func(ctx context.Context, d *discovery) (nextFunc, error) {
		since, err := starts(ctx, d)
		if err != nil {
			return nil, err
		}
		const need = catchUpResumes + catchUpItems
		var ids []string
		for _, t := range since {
			if ids, err = d.streamIDs(ctx, "/v1/firehose/stream", t, need); err != nil {
				return nil, err
			}
			if len(ids) >= need {
				break
			}
		}
		if len(ids) < need {
			return nil, skip("the firehose stream sends %d messages since %s, fewer than %d", len(ids), since[len(since)-1].Format(time.RFC3339), need)
		}
		targets := make([]vegeta.Target, catchUpResumes)
		for i := range targets {
			h := d.header.Clone()
			h.Set("Last-Event-ID", ids[i])
			h.Set(catchUpHeader, strconv.Itoa(catchUpItems))
			targets[i] = vegeta.Target{Method: http.MethodGet, URL: d.url("/v1/firehose/stream", nil), Header: h}
		}
		return roundRobin(targets...), nil
	}
}

// streamIDs opens the stream at path with since and returns the event ids
// of its first n items, or of as many as it sends before it falls quiet
// (its catch-up done).
func (d *discovery) streamIDs(ctx context.Context, path string, since time.Time, n int) ([]string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u := d.url(path, url.Values{"since": {since.UTC().Format(time.RFC3339Nano)}})
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	req.Header = d.header.Clone()
	// Not d.client: its timeout would cut the stream. Its transport is
	// guarded to loopback like every other request.
	res, err := (&http.Client{Transport: d.client.Transport}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return nil, fmt.Errorf("GET %s: %d %s", path, res.StatusCode, body)
	}
	// A stream that has sent its catch-up waits for new items: a quiet
	// spell ends the read.
	quiet := time.AfterFunc(catchUpQuiet, cancel)
	defer quiet.Stop()
	var ids []string
	_, err = readEvents(res.Body, n, func(id string) {
		ids = append(ids, id)
		quiet.Reset(catchUpQuiet)
	})
	if err != nil && ctx.Err() == nil {
		return nil, fmt.Errorf("GET %s: %w", path, err)
	}
	return ids, nil
}

// catchUpQuiet is how long a stream may send nothing before streamIDs
// takes its catch-up for done.
const catchUpQuiet = 5 * time.Second

// recentStarts are the recent catch-up's starts: spans before the newest
// message, widening, so that the catch-ups resume a short disconnect ago
// whatever the firehose's density.
func recentStarts(ctx context.Context, d *discovery) ([]time.Time, error) {
	var msgs []struct {
		CreatedAt time.Time `json:"created_at"`
	}
	if err := d.getJSON(ctx, "/v1/firehose", url.Values{"limit": {"1"}}, &msgs); err != nil {
		return nil, err
	}
	if len(msgs) == 0 {
		return nil, skip("no firehose messages")
	}
	var starts []time.Time
	for _, span := range []time.Duration{time.Hour, 6 * time.Hour, 36 * time.Hour, 9 * 24 * time.Hour} {
		starts = append(starts, msgs[0].CreatedAt.Add(-span))
	}
	return starts, nil
}

// oldestStarts is the deep catch-up's start: the oldest message kept, so
// that the catch-ups resume from positions in the oldest month.
func oldestStarts(ctx context.Context, d *discovery) ([]time.Time, error) {
	oldest, err := d.firehoseOldest(ctx)
	if err != nil {
		return nil, err
	}
	return []time.Time{oldest}, nil
}
