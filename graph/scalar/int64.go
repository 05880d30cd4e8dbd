package scalar

import (
	"encoding/json"
	"io"
	"strconv"

	"github.com/99designs/gqlgen/graphql"

	"github.com/feedapi/feedapi/graph/apperr"
)

// The Int64 scalar is the type of every id. GraphQL's Int is a signed 32-bit
// integer by the specification, so clients such as graphql-js refuse an Int
// above 2147483647; ids are 64-bit. Int64 is written as a JSON number, as
// Int is, so answers read the same as before; as input it takes an integer
// literal, a JSON number without fraction or exponent, or a string of
// decimal digits (for clients whose numbers cannot hold 64 bits).

// MarshalInt64 writes i as a JSON number.
func MarshalInt64(i int64) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		var buf [20]byte
		w.Write(AppendInt64(buf[:0], i)) //nolint:errcheck // gqlgen's writers buffer and report nothing
	})
}

// UnmarshalInt64 accepts a 64-bit signed integer given as an integer literal
// (int64 from the query), a JSON number of digits (a variable) or a string
// of decimal digits with an optional minus sign.
func UnmarshalInt64(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case json.Number:
		return parseInt64(string(x))
	case string:
		return parseInt64(x)
	default:
		return 0, apperr.Invalid("", "Int64 must be an integer or a string of decimal digits, got %T", v)
	}
}

// parseInt64 reads decimal digits with an optional leading minus sign: no
// plus sign, spaces, fraction, exponent, or value beyond 64 bits.
func parseInt64(s string) (int64, error) {
	digits := s
	if len(digits) > 0 && digits[0] == '-' {
		digits = digits[1:]
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, apperr.Invalid("", "Int64 must be an integer of decimal digits, got %q", truncateInput(s))
		}
	}
	i, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, apperr.Invalid("", "Int64 must be an integer from -9223372036854775808 to 9223372036854775807, got %q", truncateInput(s))
	}
	return i, nil
}

// truncateInput shortens client input echoed in a message.
func truncateInput(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}
