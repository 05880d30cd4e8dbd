// Package scalar holds the marshallers of feedapi's custom GraphQL scalars.
// They write the contract's exact formats with appends into small buffers,
// because they run once per field of every item served.
package scalar

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
)

// DateTimeLayout is the contract's timestamp format: UTC, milliseconds, Z.
const DateTimeLayout = "2006-01-02T15:04:05.000Z"

// MarshalDateTime writes t in UTC as YYYY-MM-DDTHH:MM:SS.sssZ.
func MarshalDateTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		var buf [len(DateTimeLayout) + 2]byte
		w.Write(AppendDateTime(buf[:0], t)) //nolint:errcheck // gqlgen's writers buffer and report nothing
	})
}

// UnmarshalDateTime accepts an RFC 3339 date-time with Z or an offset.
func UnmarshalDateTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, apperr.Invalid("", "DateTime must be an RFC 3339 date-time string, got %T", v)
	}
	t, err := db.ParseTimestamp(s)
	if err != nil {
		return time.Time{}, apperr.Invalid("", "DateTime must be an RFC 3339 date-time such as 2026-01-02T15:04:05Z")
	}
	return t.UTC(), nil
}

// MarshalDate writes t as YYYY-MM-DD.
func MarshalDate(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		var buf [len(time.DateOnly) + 2]byte
		w.Write(AppendDate(buf[:0], t)) //nolint:errcheck
	})
}

// UnmarshalDate accepts a real calendar day written YYYY-MM-DD.
func UnmarshalDate(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, apperr.Invalid("", "Date must be a string YYYY-MM-DD, got %T", v)
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, apperr.Invalid("", "Date must be a calendar date YYYY-MM-DD")
	}
	return t, nil
}

// MarshalMoney writes m as a plain decimal JSON number with two fraction digits.
func MarshalMoney(m db.Money) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		var buf [24]byte
		w.Write(AppendMoney(buf[:0], m)) //nolint:errcheck
	})
}

// UnmarshalMoney accepts a decimal string or a JSON number with at most two decimals.
func UnmarshalMoney(v any) (db.Money, error) {
	switch x := v.(type) {
	case string:
		return parseMoney(x)
	case json.Number:
		return parseMoney(x.String())
	case int64:
		return db.Money(x * 100), nil
	case int:
		return db.Money(int64(x) * 100), nil
	default:
		return 0, apperr.Invalid("", "Money must be a decimal number, got %T", v)
	}
}

// MarshalJSON writes a stored JSON document unchanged.
func MarshalJSON(raw json.RawMessage) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		if len(raw) == 0 {
			io.WriteString(w, "null") //nolint:errcheck
			return
		}
		w.Write(raw) //nolint:errcheck
	})
}

// UnmarshalJSON re-encodes an input value as JSON.
func UnmarshalJSON(v any) (json.RawMessage, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("JSON: %w", err)
	}
	return b, nil
}

func parseMoney(s string) (db.Money, error) {
	m, err := db.ParseMoney(s)
	if errors.Is(err, db.ErrMoneyRange) {
		return 0, &apperr.Error{Code: apperr.BadRequest, Err: err,
			Message: fmt.Sprintf("Money must be at most %d digits before the point", db.MaxMoneyDigits)}
	}
	if err != nil {
		return 0, &apperr.Error{Code: apperr.BadRequest, Message: "Money must be a plain decimal with at most two fraction digits", Err: err}
	}
	return m, nil
}

// MarshalPercent writes p as a plain decimal JSON number with two fraction digits.
func MarshalPercent(p db.Percent) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		var buf [16]byte
		w.Write(AppendPercent(buf[:0], p)) //nolint:errcheck
	})
}

// UnmarshalPercent accepts a decimal string or a JSON number from 0 to
// 999.99 with at most two decimals.
func UnmarshalPercent(v any) (db.Percent, error) {
	s, ok := decimalInput(v)
	p, err := db.ParsePercent(s)
	if !ok || err != nil {
		return 0, &apperr.Error{Code: apperr.BadRequest, Message: "Percent must be a plain decimal from 0 to 999.99 with at most two fraction digits", Err: err}
	}
	return p, nil
}

// MarshalCoinAmount writes c as a plain decimal JSON number with eight fraction digits.
func MarshalCoinAmount(c db.CoinAmount) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		var buf [32]byte
		w.Write(AppendCoinAmount(buf[:0], c)) //nolint:errcheck
	})
}

// UnmarshalCoinAmount accepts a decimal string or a JSON number with at
// most eight decimals.
func UnmarshalCoinAmount(v any) (db.CoinAmount, error) {
	s, ok := decimalInput(v)
	c, err := db.ParseCoinAmount(s)
	if !ok || err != nil {
		return 0, &apperr.Error{Code: apperr.BadRequest, Message: "CoinAmount must be a plain decimal with at most eight fraction digits", Err: err}
	}
	return c, nil
}

// decimalInput returns the text of a decimal input value.
func decimalInput(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return x.String(), true
	case int64:
		return strconv.FormatInt(x, 10), true
	case int:
		return strconv.Itoa(x), true
	}
	return "", false
}
