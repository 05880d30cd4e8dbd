package rest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/contract"
)

// APIVersion is the version of the REST API, reported in meta.api_version.
const APIVersion = contract.APIVersion

// contentTypeJSON is the Content-Type of every response.
const contentTypeJSON = "application/json; charset=utf-8"

// Cache-Control values.
const (
	cacheKeyed   = "private, no-cache" // per-key data: revalidate with the ETag
	cacheNone    = "no-store"          // errors and health
	cachePublic  = "public, max-age=300"
	retryAfter   = "60" // Retry-After of a 429, in seconds
	authenticate = `Bearer realm="feedapi"`
)

// internalMessage is the whole client-facing text of every 500.
const internalMessage = "internal error; retry, then contact support with meta.request_id"

// statusOf returns the HTTP status of an error code from the contract's
// one table of errors. ok is false for codes it does not know, which are
// served as internal errors.
func statusOf(code apperr.Code) (status int, ok bool) { return contract.StatusOf(code) }

// publicCode reports whether an error of this code is shown to clients as
// it is (every known code but internal).
func publicCode(code apperr.Code) bool {
	_, ok := statusOf(code)
	return ok && code != apperr.Internal
}

// requestState is what rest keeps in a request's context.
type requestState struct {
	id string // request id: meta.request_id and X-Request-Id
}

type requestStateKey struct{}

func withRequestState(ctx context.Context, st *requestState) context.Context {
	return context.WithValue(ctx, requestStateKey{}, st)
}

// requestID returns the id of the request ctx belongs to ("" outside one).
func requestID(ctx context.Context) string {
	if st, ok := ctx.Value(requestStateKey{}).(*requestState); ok {
		return st.id
	}
	return ""
}

// newRequestID returns 32 hex digits: 48 bits of Unix milliseconds, so ids
// sort by time in logs, then 80 random bits, so they never repeat.
func newRequestID(now time.Time) string {
	var b [16]byte
	var ms [8]byte
	binary.BigEndian.PutUint64(ms[:], uint64(now.UnixMilli()))
	copy(b[:6], ms[2:])
	rand.Read(b[6:]) //nolint:errcheck // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// success is a successful result of an endpoint, before it is written.
type success struct {
	status     int    // 0 means 200
	data       []byte // the JSON value of data
	paged      bool   // pagination is an object (else null)
	hasMore    bool
	nextCursor []byte // JSON string; nil for null
	units      string // meta.units, "" for none
	position   []byte // meta.position, a JSON string or null; nil for none
	cache      string // Cache-Control; "" means cacheKeyed
}

// writeSuccess writes {"data":…,"pagination":…,"meta":…}. meta.request_id
// comes last, so that everything before it (data, pagination and the rest of
// meta) is the part the ETag covers: the request id differs per response,
// the representation does not.
func (s *server) writeSuccess(w http.ResponseWriter, r *http.Request, res success) {
	buf, tagged := s.envelope(r, res)
	status, cache := res.status, res.cache
	if status == 0 {
		status = http.StatusOK
	}
	if cache == "" {
		cache = cacheKeyed
	}
	s.send(w, r, status, buf, tagged, cache)
}

// envelope writes res's envelope into a pooled buffer and returns it with
// the length of the part the ETag covers (all but meta.request_id).
func (s *server) envelope(r *http.Request, res success) (buf *bytes.Buffer, tagged int) {
	buf = s.bufs.get()
	buf.WriteString(`{"data":`)
	buf.Write(res.data)
	buf.WriteString(`,"pagination":`)
	if res.paged {
		buf.WriteString(`{"next_cursor":`)
		if res.hasMore && res.nextCursor != nil {
			buf.Write(res.nextCursor)
		} else {
			buf.WriteString("null")
		}
		if res.hasMore {
			buf.WriteString(`,"has_more":true}`)
		} else {
			buf.WriteString(`,"has_more":false}`)
		}
	} else {
		buf.WriteString("null")
	}
	writeMeta(buf, r.Context(), res.units)
	tagged = buf.Len()
	writePosition(buf, res.position)
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

// writeError writes {"error":{"code","message"},"meta":…} for err. A domain
// error is shown with its code and message; anything else is logged with
// the request id and shown as a generic internal error.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	s.writeErrorStatus(w, r, 0, err)
}

// writeErrorStatus is writeError with the HTTP status given, for the few
// answers whose status is not their code's (431 is a bad_request); 0 takes
// the code's status.
func (s *server) writeErrorStatus(w http.ResponseWriter, r *http.Request, status int, err error) {
	ctx := r.Context()
	code, message := apperr.Internal, internalMessage
	if d := apperr.As(err); d != nil && publicCode(d.Code) {
		code, message = d.Code, d.Message
	} else {
		level := slog.LevelError
		if clientClosed(ctx) {
			// The client went away; whatever the abandoned work ended
			// with (context.Canceled, or the driver's "bad connection"
			// when the pool's reset ping was cut short) is its consequence,
			// and nobody reads the answer.
			level = slog.LevelDebug
		}
		s.log.Log(ctx, level, "internal error",
			slog.String("request_id", requestID(ctx)),
			slog.String("method", r.Method),
			// The route pattern, not the path: a client may paste anything,
			// a key included, into a path.
			slog.String("route", routePattern(r)),
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
		h.Set("Retry-After", retryAfter)
	}
	buf := s.bufs.get()
	buf.WriteString(`{"error":{"code":`)
	appendJSONString(buf, string(code))
	buf.WriteString(`,"message":`)
	appendJSONString(buf, message)
	buf.WriteByte('}')
	writeMeta(buf, ctx, "")
	writeRequestID(buf, ctx)
	s.send(w, r, status, buf, -1, cacheNone)
}

// writeMeta writes `,"meta":{"api_version":…,"tier":…[,"units":…]`, leaving
// meta open for writeRequestID.
func writeMeta(buf *bytes.Buffer, ctx context.Context, units string) {
	buf.WriteString(`,"meta":{"api_version":"` + APIVersion + `","tier":`)
	if p, ok := keys.FromContext(ctx); ok {
		appendJSONString(buf, string(p.Tier))
	} else {
		buf.WriteString("null")
	}
	if units != "" {
		buf.WriteString(`,"units":`)
		appendJSONString(buf, units)
	}
}

// writeRequestID closes the envelope with meta.request_id.
func writeRequestID(buf *bytes.Buffer, ctx context.Context) {
	buf.WriteString(`,"request_id":`)
	appendJSONString(buf, requestID(ctx))
	buf.WriteString("}}")
}

// appendJSONString writes s as a JSON string. Invalid UTF-8 becomes U+FFFD.
func appendJSONString(buf *bytes.Buffer, s string) {
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
