// Package envelope writes every answer of the REST layer: the success and
// error envelopes ({"data","pagination","meta"} and {"error","meta"}), the
// one table from domain error codes to HTTP statuses (the contract's), the
// request id, and the bytes on the wire: pooled buffers, gzip, the strong
// ETag and its 304, Vary and the write deadline of a body. It knows nothing
// of routes, keys' budgets or queries; rest and rest/auth write through it.
package envelope

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/contract"
	"github.com/feedapi/feedapi/rest/metrics"
)

// APIVersion is the version of the REST API, reported in meta.api_version.
const APIVersion = contract.APIVersion

// internalMessage is the whole client-facing text of every 500.
const internalMessage = "internal error; retry, then contact support with meta.request_id"

// statusOf returns the HTTP status of an error code from the contract's
// one table of errors. ok is false for codes it does not know, which are
// served as internal errors.
func statusOf(code apperr.Code) (status int, ok bool) { return contract.StatusOf(code) }

// PublicCode reports whether an error of this code is shown to clients as
// it is (every known code but internal).
func PublicCode(code apperr.Code) bool {
	_, ok := statusOf(code)
	return ok && code != apperr.Internal
}

// requestState is what rest keeps in a request's context.
type requestState struct {
	id string // request id: meta.request_id and X-Request-Id
}

type requestStateKey struct{}

// WithRequestID returns ctx carrying the request id id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestStateKey{}, &requestState{id: id})
}

// RequestID returns the id of the request ctx belongs to ("" outside one).
func RequestID(ctx context.Context) string {
	if st, ok := ctx.Value(requestStateKey{}).(*requestState); ok {
		return st.id
	}
	return ""
}

// NewRequestID returns 32 hex digits: 48 bits of Unix milliseconds, so ids
// sort by time in logs, then 80 random bits, so they never repeat.
func NewRequestID(now time.Time) string {
	var b [16]byte
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(now.UnixMilli()))
	copy(b[:6], ms[2:])
	rand.Read(b[6:]) //nolint:errcheck // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// Success is a successful result of an endpoint, before it is written.
type Success struct {
	Status     int    // 0 means 200
	Data       []byte // the JSON value of data
	Paged      bool   // pagination is an object (else null)
	HasMore    bool
	NextCursor []byte // JSON string; nil for null
	Units      string // meta.units, "" for none
	Position   []byte // meta.position, a JSON string or null; nil for none
	Cache      string // Cache-Control; "" means CacheKeyed
}

// Success writes {"data":…,"pagination":…,"meta":…}. meta.request_id
// comes last, so that everything before it (data, pagination and the rest of
// meta) is the part the ETag covers: the request id differs per response,
// the representation does not.
func (e *Writer) Success(w http.ResponseWriter, r *http.Request, res Success) {
	buf, tagged := e.Envelope(r, res)
	status, cache := res.Status, res.Cache
	if status == 0 {
		status = http.StatusOK
	}
	if cache == "" {
		cache = CacheKeyed
	}
	e.Send(w, r, status, buf, tagged, cache)
}

// Envelope writes res's envelope into a pooled buffer and returns it with
// the length of the part the ETag covers (all but meta.request_id).
func (e *Writer) Envelope(r *http.Request, res Success) (buf *bytes.Buffer, tagged int) {
	buf = e.bufs.get()
	buf.WriteString(`{"data":`)
	buf.Write(res.Data)
	buf.WriteString(`,"pagination":`)
	if res.Paged {
		buf.WriteString(`{"next_cursor":`)
		if res.HasMore && res.NextCursor != nil {
			buf.Write(res.NextCursor)
		} else {
			buf.WriteString("null")
		}
		if res.HasMore {
			buf.WriteString(`,"has_more":true}`)
		} else {
			buf.WriteString(`,"has_more":false}`)
		}
	} else {
		buf.WriteString("null")
	}
	writeMeta(buf, r.Context(), res.Units)
	tagged = buf.Len()
	writePosition(buf, res.Position)
	writeRequestID(buf, r.Context())
	return buf, tagged
}

// writePosition writes meta.position, when there is one. It is outside the
// part the ETag covers: the position moves with every write to the
// database, whatever the list shows, and an older position is as exact a
// start for the next poll.
func writePosition(buf *bytes.Buffer, position []byte) {
	if position != nil {
		buf.WriteString(`,"position":`)
		buf.Write(position)
	}
}

// Error writes {"error":{"code","message"},"meta":…} for err. A domain
// error is shown with its code and message; anything else is logged with
// the request id and shown as a generic internal error.
func (e *Writer) Error(w http.ResponseWriter, r *http.Request, err error) {
	e.ErrorStatus(w, r, 0, err)
}

// ErrorStatus is Error with the HTTP status given, for the few
// answers whose status is not their code's (431 is a bad_request); 0 takes
// the code's status.
func (e *Writer) ErrorStatus(w http.ResponseWriter, r *http.Request, status int, err error) {
	ctx := r.Context()
	code, message := apperr.Internal, internalMessage
	if d := apperr.As(err); d != nil && PublicCode(d.Code) {
		code, message = d.Code, d.Message
	} else {
		level := slog.LevelError
		if ClientClosed(ctx) {
			// The client went away; whatever the abandoned work ended
			// with (context.Canceled, or the driver's "bad connection"
			// when the pool's reset ping was cut short) is its consequence,
			// and nobody reads the answer.
			level = slog.LevelDebug
		}
		e.log.Log(ctx, level, "internal error",
			slog.String("request_id", RequestID(ctx)),
			slog.String("method", r.Method),
			// The route pattern, not the path: a client may paste anything,
			// a key included, into a path.
			slog.String("route", RoutePattern(r)),
			slog.Any("error", err))
	}
	if status == 0 {
		status, _ = statusOf(code)
	}
	h := w.Header()
	switch status {
	case http.StatusUnauthorized:
		h.Set("Www-Authenticate", authenticate) // canonical form of WWW-Authenticate
	case http.StatusTooManyRequests:
		h.Set("Retry-After", RetryAfter)
	}
	buf := e.bufs.get()
	buf.WriteString(`{"error":{"code":`)
	AppendJSONString(buf, string(code))
	buf.WriteString(`,"message":`)
	AppendJSONString(buf, message)
	buf.WriteByte('}')
	writeMeta(buf, ctx, "")
	writeRequestID(buf, ctx)
	e.Send(w, r, status, buf, -1, CacheNone)
}

// writeMeta writes `,"meta":{"api_version":…,"tier":…[,"units":…]`, leaving
// meta open for writeRequestID.
func writeMeta(buf *bytes.Buffer, ctx context.Context, units string) {
	buf.WriteString(`,"meta":{"api_version":"` + APIVersion + `","tier":`)
	if p, ok := keys.FromContext(ctx); ok {
		AppendJSONString(buf, string(p.Tier))
	} else {
		buf.WriteString("null")
	}
	if units != "" {
		buf.WriteString(`,"units":`)
		AppendJSONString(buf, units)
	}
}

// writeRequestID closes the envelope with meta.request_id.
func writeRequestID(buf *bytes.Buffer, ctx context.Context) {
	buf.WriteString(`,"request_id":`)
	AppendJSONString(buf, RequestID(ctx))
	buf.WriteString("}}")
}

// AppendJSONString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func AppendJSONString(buf *bytes.Buffer, s string) {
	const hexDigits = "0123456789abcdef"
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			buf.WriteString(s[start:i])
			switch c {
			case '"', '\\':
				buf.WriteByte('\\')
				buf.WriteByte(c)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			default:
				buf.WriteString(`\u00`)
				buf.WriteByte(hexDigits[c>>4])
				buf.WriteByte(hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf.WriteString(s[start:i])
			buf.WriteString(`\ufffd`)
			i++
			start = i
			continue
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}

// RoutePattern returns the chi pattern that matched r (such as
// /v1/posts/{id}), or metrics.RouteUnmatched: a bounded set of values, safe for
// metric labels and logs, unlike the path a client sent.
func RoutePattern(r *http.Request) string {
	if rc := chi.RouteContext(r.Context()); rc != nil {
		if p := rc.RoutePattern(); p != "" {
			return p
		}
	}
	return metrics.RouteUnmatched
}

// ClientClosed reports whether ctx, a request's context, was cancelled
// because its client went away (not by the request timeout).
func ClientClosed(ctx context.Context) bool {
	return ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled)
}

// Truncate shortens client-supplied text echoed in messages and logs.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// SendCached answers with a cached page (rest/pollcache): body is its
// envelope up to meta.position, tag the hash of body. 304 when
// If-None-Match names it, else body with position and this request's id.
func (e *Writer) SendCached(w http.ResponseWriter, r *http.Request, body, position []byte, tag string) {
	n := len(body) + len(`,"position":`) + len(position) + len(`,"request_id":""}}`) + 32
	zip := Headers(w, r, n, CacheKeyed, ContentTypeJSON)
	if notModified(w, r, tag, zip) {
		return
	}
	buf := e.bufs.get()
	buf.Write(body)
	writePosition(buf, position)
	writeRequestID(buf, r.Context())
	e.SendTyped(w, r, http.StatusOK, buf, len(body), tag, CacheKeyed, ContentTypeJSON)
}
