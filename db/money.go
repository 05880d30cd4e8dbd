package db

import (
	"database/sql/driver"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Money is an exact amount of US dollars, held as whole cents. It maps to
// numeric(20,2) and never goes through floating point.
type Money int64

// errMoneySyntax is returned for text that is not a decimal with at most two
// fraction digits.
var errMoneySyntax = errors.New("not a decimal amount with at most two decimals")

// MaxMoneyDigits is the most digits an amount has before its point: up to
// ±99,999,999,999,999.99 dollars, which numeric(20,2) and a 64-bit float
// both hold exactly to the cent.
const MaxMoneyDigits = 14

// ErrMoneyRange is returned for a well-formed amount with more than
// MaxMoneyDigits digits before its point.
var ErrMoneyRange = fmt.Errorf("amount beyond ±%s.99", strings.Repeat("9", MaxMoneyDigits))

// ParseMoney parses a plain decimal such as "-1234.5" or "1234.56".
// Exponents and more than two decimals are refused, and amounts beyond
// MaxMoneyDigits digits with ErrMoneyRange.
func ParseMoney(s string) (Money, error) {
	neg := strings.HasPrefix(s, "-")
	digits := strings.TrimPrefix(s, "-")
	whole, frac, hasDot := strings.Cut(digits, ".")
	if whole == "" || len(frac) > 2 || (hasDot && frac == "") {
		return 0, fmt.Errorf("%q: %w", s, errMoneySyntax)
	}
	for _, part := range []string{whole, frac} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return 0, fmt.Errorf("%q: %w", s, errMoneySyntax)
			}
		}
	}
	if whole = strings.TrimLeft(whole, "0"); whole == "" {
		whole = "0"
	}
	if len(whole) > MaxMoneyDigits {
		return 0, fmt.Errorf("%q: %w", s, ErrMoneyRange)
	}
	for len(frac) < 2 {
		frac += "0"
	}
	cents, err := strconv.ParseInt(whole+frac, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, errMoneySyntax)
	}
	if neg {
		cents = -cents
	}
	return Money(cents), nil
}

// AppendText appends the amount as a plain decimal with two fraction digits.
func (m Money) AppendText(b []byte) ([]byte, error) {
	c := int64(m)
	if c < 0 {
		b = append(b, '-')
		c = -c
	}
	b = strconv.AppendInt(b, c/100, 10)
	b = append(b, '.', byte('0'+c%100/10), byte('0'+c%10))
	return b, nil
}

// String returns the amount as a plain decimal with two fraction digits.
func (m Money) String() string {
	b, _ := m.AppendText(make([]byte, 0, 24))
	return string(b)
}

// Value implements driver.Valuer.
func (m Money) Value() (driver.Value, error) { return m.String(), nil }

// Scan implements sql.Scanner for numeric columns.
func (m *Money) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case string:
		s = v
	case []byte:
		s = string(v)
	case int64:
		*m = Money(v * 100)
		return nil
	default:
		return fmt.Errorf("money: cannot scan %T", src)
	}
	parsed, err := ParseMoney(s)
	if err != nil {
		return fmt.Errorf("money: %w", err)
	}
	*m = parsed
	return nil
}
