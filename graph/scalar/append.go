package scalar

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/feedapi/feedapi/db"
)

// The Append functions append a scalar's JSON to b, byte for byte as its
// marshaller writes it: this package's for the custom scalars, gqlgen's for
// the built-in ones. The executable schema's plain objects (see
// graph/internal/codegen) write their fields with them, without a
// marshaller, and so a closure, per field. The code generator finds them
// by name: AppendX for MarshalX.

// AppendString appends s quoted as gqlgen's graphql.MarshalString writes
// it: `"`, `\`, tab, CR and LF escaped by name, other control characters as
// \u00XX (upper-case hex), and everything else, invalid UTF-8 included, as it is.
func AppendString(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !escaped[c] {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '\t':
			b = append(b, `\t`...)
		case '\r':
			b = append(b, `\r`...)
		case '\n':
			b = append(b, `\n`...)
		case '\\':
			b = append(b, `\\`...)
		case '"':
			b = append(b, `\"`...)
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// escaped marks the bytes AppendString escapes: control characters, quote
// and backslash.
var escaped = [256]bool{'"': true, '\\': true,
	0x00: true, 0x01: true, 0x02: true, 0x03: true, 0x04: true, 0x05: true, 0x06: true, 0x07: true,
	0x08: true, 0x09: true, 0x0a: true, 0x0b: true, 0x0c: true, 0x0d: true, 0x0e: true, 0x0f: true,
	0x10: true, 0x11: true, 0x12: true, 0x13: true, 0x14: true, 0x15: true, 0x16: true, 0x17: true,
	0x18: true, 0x19: true, 0x1a: true, 0x1b: true, 0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true,
}

// AppendInt appends i as graphql.MarshalInt writes it.
func AppendInt(b []byte, i int) []byte { return strconv.AppendInt(b, int64(i), 10) }

// AppendInt64 appends i as graphql.MarshalInt64 writes it.
func AppendInt64(b []byte, i int64) []byte { return strconv.AppendInt(b, i, 10) }

// AppendBoolean appends v as graphql.MarshalBoolean writes it.
func AppendBoolean(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// AppendDateTime appends t as MarshalDateTime writes it.
func AppendDateTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, DateTimeLayout)
	return append(b, '"')
}

// AppendDate appends t as MarshalDate writes it.
func AppendDate(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.DateOnly)
	return append(b, '"')
}

// AppendMoney appends m as MarshalMoney writes it.
func AppendMoney(b []byte, m db.Money) []byte {
	b, _ = m.AppendText(b) // appending to a slice cannot fail
	return b
}

// AppendJSON appends raw as MarshalJSON writes it.
func AppendJSON(b []byte, raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return append(b, "null"...)
	}
	return append(b, raw...)
}
