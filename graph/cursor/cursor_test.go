package cursor_test

import (
	"encoding/base64"
	"math"
	"net/url"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/cursor"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, conn := range []string{"posts", "firehose", "briefs", "brief:42:posts"} {
		for _, id := range []int64{1, 255, 9_000_000_000_001, math.MaxInt64} {
			s := cursor.Encode(conn, id)
			if url.QueryEscape(s) != s {
				t.Errorf("cursor %q is not URL-safe", s)
			}
			got, err := cursor.Decode(conn, s)
			if err != nil || got != id {
				t.Errorf("Decode(%s, Encode(%d)) = %d, %v", conn, id, got, err)
			}
		}
	}
}

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

func TestRefused(t *testing.T) {
	t.Parallel()
	good := cursor.Encode("posts", 12345)
	raw, _ := base64.RawURLEncoding.DecodeString(good)
	flip := func(i int, bit byte) string {
		b := append([]byte(nil), raw...)
		b[i] ^= bit
		return base64.RawURLEncoding.EncodeToString(b)
	}
	tests := []struct{ name, conn, s string }{
		{"empty", "posts", ""},
		{"garbage", "posts", "hello world"},
		{"standard base64 padding", "posts", base64.URLEncoding.EncodeToString(raw)},
		{"truncated", "posts", good[:len(good)-2]},
		{"extended", "posts", good + "AA"},
		{"tampered version", "posts", flip(0, 1)},
		{"tampered id", "posts", flip(5, 0x10)},
		{"tampered check", "posts", flip(len(raw)-1, 0x80)},
		{"non-canonical trailing bits", "posts", good[:len(good)-1] + string(alphabet[strings.IndexByte(alphabet, good[len(good)-1])^1])},
		{"other connection", "firehose", good},
		{"other brief", "brief:1:posts", cursor.Encode("brief:2:posts", 7)},
		{"zero id", "posts", cursor.Encode("posts", 0)},
		{"negative id", "posts", cursor.Encode("posts", -5)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := cursor.Decode(tt.conn, tt.s)
			e := apperr.As(err)
			if e == nil || e.Code != apperr.BadRequest || e.Param != "cursor" {
				t.Errorf("Decode(%q) error = %v, want bad_request for cursor", tt.s, err)
			}
		})
	}
}
