package db

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// CoinAmount is an exact quantity of coins, held in units of 10^-8 coin
// (a satoshi for bitcoin). It maps to numeric(18,8) and never goes through
// floating point.
type CoinAmount int64

// coinDecimals is the number of fraction digits of a CoinAmount.
const coinDecimals = 8

// ParseCoinAmount parses a plain decimal with at most 8 fraction digits and
// at most 10 digits before the point, such as "812345.12345678".
func ParseCoinAmount(s string) (CoinAmount, error) {
	v, err := parseFixed(s, coinDecimals, 10)
	return CoinAmount(v), err
}

// AppendText appends the quantity as a plain decimal with 8 fraction digits.
func (c CoinAmount) AppendText(b []byte) ([]byte, error) {
	return appendFixed(b, int64(c), coinDecimals), nil
}

// String returns the quantity as a plain decimal with 8 fraction digits.
func (c CoinAmount) String() string { return string(appendFixed(nil, int64(c), coinDecimals)) }

// Value implements driver.Valuer.
func (c CoinAmount) Value() (driver.Value, error) { return c.String(), nil }

// Scan implements sql.Scanner for numeric columns.
func (c *CoinAmount) Scan(src any) error {
	v, err := scanFixed(src, coinDecimals, 11)
	*c = CoinAmount(v)
	return err
}

// Percent is an exact percentage with two decimals (0.25 is a quarter of a
// percent), held in hundredths of a percent: a fund's yearly fee. It maps
// to numeric(5,2).
type Percent int64

// ParsePercent parses a plain decimal from 0 to 999.99 with at most two
// fraction digits.
func ParsePercent(s string) (Percent, error) {
	if strings.HasPrefix(s, "-") {
		return 0, fmt.Errorf("%q: %w", s, errFixedSyntax)
	}
	v, err := parseFixed(s, 2, 3)
	return Percent(v), err
}

// AppendText appends the percentage as a plain decimal with two fraction digits.
func (p Percent) AppendText(b []byte) ([]byte, error) { return appendFixed(b, int64(p), 2), nil }

// String returns the percentage as a plain decimal with two fraction digits.
func (p Percent) String() string { return string(appendFixed(nil, int64(p), 2)) }

// Value implements driver.Valuer.
func (p Percent) Value() (driver.Value, error) { return p.String(), nil }

// Scan implements sql.Scanner for numeric columns.
func (p *Percent) Scan(src any) error {
	v, err := scanFixed(src, 2, 3)
	*p = Percent(v)
	return err
}

var errFixedSyntax = errors.New("not a plain decimal in range")

// parseFixed parses a plain decimal (optional minus, digits, optional point
// and at most scale digits) into an integer of 10^-scale units; the whole
// part has at most maxWhole digits.
func parseFixed(s string, scale, maxWhole int) (int64, error) {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	whole, frac, hasDot := strings.Cut(digits, ".")
	if whole == "" || len(whole) > maxWhole || len(frac) > scale || (hasDot && frac == "") {
		return 0, fmt.Errorf("%q: %w", s, errFixedSyntax)
	}
	if strings.Trim(whole, "0123456789") != "" || strings.Trim(frac, "0123456789") != "" {
		return 0, fmt.Errorf("%q: %w", s, errFixedSyntax)
	}
	frac += strings.Repeat("0", scale-len(frac))
	v, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, errFixedSyntax)
	}
	if neg {
		v = -v
	}
	return v, nil
}

// appendFixed appends v (in 10^-scale units) as a plain decimal with scale
// fraction digits.
func appendFixed(b []byte, v int64, scale int) []byte {
	u := uint64(v)
	if v < 0 {
		b = append(b, '-')
		u = uint64(-v)
	}
	pow := uint64(1)
	for range scale {
		pow *= 10
	}
	b = strconv.AppendUint(b, u/pow, 10)
	b = append(b, '.')
	frac := strconv.FormatUint(u%pow, 10)
	for range scale - len(frac) {
		b = append(b, '0')
	}
	return append(b, frac...)
}

// scanFixed reads a numeric column into 10^-scale units.
func scanFixed(src any, scale, maxWhole int) (int64, error) {
	var s string
	switch v := src.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	case int64:
		s = strconv.FormatInt(v, 10)
	default:
		return 0, fmt.Errorf("fixed-point: cannot scan %T", src)
	}
	v, err := parseFixed(s, scale, maxWhole)
	if err != nil {
		return 0, fmt.Errorf("fixed-point: %w", err)
	}
	return v, nil
}
