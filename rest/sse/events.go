// Package sse writes the Server-Sent Events streams of /v1: the rendered
// events of a read, and the two sinks of a live feed (graph/live) that
// write them, one for a connection taken from net/http (HTTP/1.x) and one
// for a connection net/http keeps (HTTP/2).
package sse

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/feedapi/feedapi/graph/live"
)

// Events is one read of a stream, rendered: the events of its items, the
// same bytes for every stream that takes the read.
type Events struct {
	Payload []byte // the events
	Chunk   []byte // the events framed as one HTTP/1.1 chunk; Payload is its inside
}

// NewEvents renders the events ev of one read: the same bytes for every
// stream that takes the read.
func NewEvents(ev []byte) *Events {
	chunk := appendChunk(nil, ev)
	return &Events{Payload: chunkPayload(chunk, len(ev)), Chunk: chunk}
}

// Preamble opens every stream: a comment, and the client's
// reconnection delay.
const Preamble = ": feedapi stream; retry after 1 s on disconnect\nretry: 1000\n\n"

// FinalEvent renders the event that ends a stream: an error object as in
// the envelope.
func FinalEvent(e live.End) []byte {
	msg := e.Message
	if e.Resume {
		msg += "; reconnect with Last-Event-ID to resume"
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": e.Code, "message": msg}})
	return fmt.Appendf(nil, "event: error\ndata: %s\n\n", b)
}

// heartbeatEvent is the heartbeat comment.
const heartbeatEvent = ": heartbeat\n\n"

// heartbeatChunk is the heartbeat comment as one chunk.
var heartbeatChunk = appendChunk(nil, []byte(heartbeatEvent))

// chunkTerminator ends a chunked body.
const chunkTerminator = "0\r\n\r\n"

// appendChunk appends p framed as one HTTP/1.1 chunk to dst.
func appendChunk(dst, p []byte) []byte {
	dst = strconv.AppendInt(dst, int64(len(p)), 16)
	dst = append(dst, "\r\n"...)
	dst = append(dst, p...)
	return append(dst, "\r\n"...)
}

// chunkPayload returns the payload of chunk, n bytes long.
func chunkPayload(chunk []byte, n int) []byte {
	start := len(chunk) - 2 - n
	return chunk[start : start+n : start+n]
}

// Start is what a stream's sink needs to join its feed.
type Start struct {
	Feed    *live.Feed[*Events]
	Key     string
	Read    live.Reader[*Events]
	First   *live.Page[*Events]
	Wake    <-chan struct{}
	Release func() // the key's live-feed slot
	KeyID   int64
}
