package cursor_test

import (
	"encoding/base64"
	"math"
	"testing"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/cursor"
)

// zeroTailID returns an id whose cursor in connection ends in a zero byte,
// the case where dropping the last base64 digit leaves the same bytes.
func zeroTailID(connection string) int64 {
	for id := int64(1); ; id++ {
		raw, _ := base64.RawURLEncoding.DecodeString(cursor.Encode(connection, id))
		if raw[len(raw)-1] == 0 {
			return id
		}
	}
}

// FuzzDecode checks that Decode never panics and that cursors are
// canonical: a string Decode accepts is exactly the one Encode writes for
// its id, so no other spelling of a cursor (another base64 padding, stray
// bits, ignored characters, a tampered byte) is accepted, and a cursor
// works only on its own connection. Encode and Decode round-trip every
// positive id.
func FuzzDecode(f *testing.F) {
	tail := zeroTailID("posts")
	good := cursor.Encode("posts", tail)
	for _, s := range []struct {
		connection string
		id         int64
		text       string // decoded as is, and XORed into the cursor of id as a mutation
	}{
		{"posts", 1, ""},
		{"posts", 12345, cursor.Encode("posts", 12345)},
		{"firehose", math.MaxInt64, cursor.Encode("posts", math.MaxInt64)},
		{"brief:42:posts", 9_000_000_000_001, cursor.Encode("brief:41:posts", 9_000_000_000_001)},
		{"briefs", 0, cursor.Encode("briefs", 0)},
		{"briefs", -7, cursor.Encode("briefs", -7)},
		{"posts", tail, good[:len(good)-1] + "\n"},
		{"posts", tail, good[:len(good)-1] + "\r"},
		{"posts", tail, "\n" + good[:len(good)-1]},
		{"posts", tail, good[:10] + "\r\n" + good[10:len(good)-2]},
		{"posts", tail, good + "="},
		{"posts", tail, base64.URLEncoding.EncodeToString([]byte{1})},
		{"posts", 5, "\x00"},
		{"posts", 5, "\x01"},
		{"posts", 5, "\xff\xff\xff"},
		{"", 5, "AQAAAAAAAAAAAAAAAAAAAAA"},
		{"posts", 5, "hello world"},
		{"posts", 5, "++//"},
	} {
		f.Add(s.connection, s.id, s.text)
	}
	f.Fuzz(func(t *testing.T, connection string, id int64, text string) {
		// Anything: refused with bad_request, or the canonical cursor of a positive id.
		if got, err := cursor.Decode(connection, text); err != nil {
			if e := apperr.As(err); e == nil || e.Code != apperr.BadRequest || e.Param != cursor.Param {
				t.Fatalf("Decode(%q, %q) error %v, want bad_request for %s", connection, text, err, cursor.Param)
			}
		} else if got <= 0 || cursor.Encode(connection, got) != text {
			t.Fatalf("Decode(%q, %q) = %d, but that id's cursor is %q", connection, text, got, cursor.Encode(connection, got))
		}
		if id <= 0 {
			if _, err := cursor.Decode(connection, cursor.Encode(connection, id)); err == nil {
				t.Fatalf("the cursor of id %d was accepted", id)
			}
			return
		}
		// Round trip, and binding to the connection.
		c := cursor.Encode(connection, id)
		if got, err := cursor.Decode(connection, c); err != nil || got != id {
			t.Fatalf("Decode(%q, Encode(%d)) = %d, %v", connection, id, got, err)
		}
		if _, err := cursor.Decode(connection+"x", c); err == nil {
			t.Fatalf("a cursor of %q was accepted by %q", connection, connection+"x")
		}
		// A mutation: text XORed into the cursor, cyclically. A changed
		// cursor is refused (or, were the 64-bit check to collide, is the
		// canonical cursor of another id, which the first check covers).
		if text == "" {
			return
		}
		m := []byte(c)
		for i := range max(len(m), len(text)) {
			if i < len(m) {
				m[i] ^= text[i%len(text)]
			} else {
				m = append(m, text[i])
			}
		}
		if string(m) == c {
			return
		}
		if got, err := cursor.Decode(connection, string(m)); err == nil && got == id {
			t.Fatalf("the mutated cursor %q of id %d (from %q) decodes to the same id", m, id, c)
		}
	})
}
