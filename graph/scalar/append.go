package scalar

import (
	"encoding/binary"
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
	for i := 0; i < len(s); {
		// Skip eight bytes at a time while none of them needs escaping
		// (news text is mostly plain; this is most of a page's rendering);
		// look at the others, and at the last few, one by one.
		end := len(s)
		if i+8 <= len(s) {
			if !needsEscape(binary.LittleEndian.Uint64([]byte(s[i : i+8]))) {
				i += 8
				continue
			}
			end = i + 8
		}
		for ; i < end; i++ {
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
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// needsEscape reports whether one of the eight bytes of x may need escaping:
// a control character, '"' or '\\'. It never misses one; a false alarm
// (a borrow from a byte that needs escaping into the next) only sends
// AppendString to its byte-by-byte check.
func needsEscape(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	less0x20 := (x - ones*0x20) &^ x
	quote := x ^ (ones * '"')
	backslash := x ^ (ones * '\\')
	return (less0x20|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs != 0
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
	t = t.UTC()
	year, month, day := t.Date()
	if year < 0 || year > 9999 {
		b = append(b, '"')
		b = t.AppendFormat(b, DateTimeLayout)
		return append(b, '"')
	}
	// DateTimeLayout written field by field: every row of a page has a
	// timestamp, and time.Format interprets its layout for each.
	hour, minute, sec := t.Clock()
	ms := t.Nanosecond() / int(time.Millisecond)
	return append(b, '"',
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(month)/10), byte('0'+int(month)%10), '-',
		byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hour/10), byte('0'+hour%10), ':',
		byte('0'+minute/10), byte('0'+minute%10), ':',
		byte('0'+sec/10), byte('0'+sec%10), '.',
		byte('0'+ms/100), byte('0'+ms/10%10), byte('0'+ms%10), 'Z', '"')
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

// AppendPercent appends p as MarshalPercent writes it.
func AppendPercent(b []byte, p db.Percent) []byte {
	b, _ = p.AppendText(b) // appending to a slice cannot fail
	return b
}

// AppendCoinAmount appends c as MarshalCoinAmount writes it.
func AppendCoinAmount(b []byte, c db.CoinAmount) []byte {
	b, _ = c.AppendText(b) // appending to a slice cannot fail
	return b
}
