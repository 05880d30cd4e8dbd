package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/feedapi/feedapi/db"
)

// fieldError is what is wrong with one line: the field (or "json" when the
// line is not a JSON object) and the problem, reported as "field: problem".
type fieldError struct {
	field, problem string
}

func (e *fieldError) Error() string { return e.field + ": " + e.problem }

// object is one NDJSON line decoded into its members, still raw. Its typed
// getters each read one member, mark it used, and record the first problem
// met, so that a validator reads as a list of fields; err reports the result.
type object struct {
	names   []string // member names in the order of the line
	members map[string]json.RawMessage
	used    map[string]bool
	first   *fieldError

	maxTicker int       // Options.MaxTickerLen
	keptSince time.Time // Options.FirehoseRetention's oldest kept created_at; zero: all
}

// decodeObject splits a line into its members. It refuses a line that is not
// one JSON object, a member given twice, and bytes that are not UTF-8.
func decodeObject(line []byte) (*object, *fieldError) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			return nil, &fieldError{"json", fmt.Sprintf("%v (at byte %d)", err, syntax.Offset)}
		}
		return nil, &fieldError{"json", fmt.Sprint(err)}
	}
	if !utf8.Valid(line) {
		return nil, &fieldError{"json", "invalid UTF-8"}
	}
	line = bytes.Clone(line) // the values are kept in rows (raw), and the caller reuses line
	i := skipSpace(line, 0)
	if line[i] != '{' {
		return nil, &fieldError{"json", "not a JSON object"}
	}
	o := &object{members: map[string]json.RawMessage{}, used: map[string]bool{"uid": true}}
	for i = skipSpace(line, i+1); line[i] != '}'; i = skipSpace(line, i) {
		if line[i] == ',' {
			i = skipSpace(line, i+1)
		}
		end := stringEnd(line, i)
		name := unquote(line[i:end])
		i = skipSpace(line, skipSpace(line, end)+1) // past the colon
		vend := valueEnd(line, i)
		if _, dup := o.members[name]; dup {
			return nil, &fieldError{name, "duplicate field"}
		}
		o.names = append(o.names, name)
		o.members[name] = line[i:vend:vend]
		i = vend
	}
	return o, nil
}

// The scanners below read a line that json.Valid accepted: every index
// they are given starts a token of a well-formed JSON text, so they need
// no error paths (FuzzDecodeObject compares them with encoding/json).

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// stringEnd returns the index after the string that starts at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; ; j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
}

// valueEnd returns the index after the value that starts at b[i].
func valueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return stringEnd(b, i)
	case '{', '[':
		depth := 0
		for j := i; ; j++ {
			switch b[j] {
			case '"':
				j = stringEnd(b, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	}
	j := i // a number, true, false or null
	for j < len(b) && b[j] != ',' && b[j] != '}' && b[j] != ']' && b[j] != ' ' && b[j] != '\t' && b[j] != '\n' && b[j] != '\r' {
		j++
	}
	return j
}

// unquote returns the content of a valid JSON string of UTF-8 text: as it
// stands when it has no escape, else as encoding/json decodes it.
func unquote(v []byte) string {
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v[1 : len(v)-1])
	}
	var s string
	_ = json.Unmarshal(v, &s)
	return s
}

// err returns the line's problem: an unknown member first (it is likely a
// misspelling of a field reported missing), else the first invalid field.
func (o *object) err() error {
	for _, name := range o.names {
		if !o.used[name] {
			return &fieldError{name, "unknown field"}
		}
	}
	if o.first != nil {
		return o.first
	}
	return nil
}

// fail records a problem unless an earlier field already failed.
func (o *object) fail(field, format string, args ...any) {
	if o.first == nil {
		o.first = &fieldError{field, fmt.Sprintf(format, args...)}
	}
}

// check records problem for field when ok is false.
func (o *object) check(ok bool, field, problem string) {
	if !ok {
		o.fail(field, "%s", problem)
	}
}

// take returns the member's value and marks it used; an absent member and
// null are the same.
func (o *object) take(name string) (json.RawMessage, bool) {
	o.used[name] = true
	v, ok := o.members[name]
	if !ok || string(v) == "null" {
		return nil, false
	}
	return v, true
}

// require is take for a required member.
func (o *object) require(name string) (json.RawMessage, bool) {
	v, ok := o.take(name)
	if !ok {
		o.fail(name, "required")
	}
	return v, ok
}

// integer reads a required JSON integer in [lo, hi]; problem describes the range.
func (o *object) integer(name string, lo, hi int64, problem string) int64 {
	v, ok := o.require(name)
	if !ok {
		return 0
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n < lo || n > hi {
		o.fail(name, "%s", problem)
		return 0
	}
	return n
}

// maxID is the largest id an import accepts: 2^53−1, the largest integer
// below which an IEEE double (a JavaScript number, and many JSON decoders'
// default) holds every integer exactly, so that every JSON client reads the
// ids it is served without losing digits.
const maxID = 1<<53 - 1

// id reads a required positive integer of at most maxID.
func (o *object) id(name string) int64 {
	n := o.integer(name, 1, math.MaxInt64, "must be a positive integer")
	if n > maxID {
		o.fail(name, "must be at most %d (2^53-1): a larger id loses digits in JavaScript and other JSON clients", int64(maxID))
		return 0
	}
	return n
}

// count reads a required non-negative integer that fits a PostgreSQL integer.
func (o *object) count(name string) int {
	return int(o.integer(name, 0, math.MaxInt32, "must be a non-negative integer"))
}

// str decodes a JSON string without NUL characters, which PostgreSQL text refuses.
func (o *object) str(name string, v json.RawMessage) (string, bool) {
	if v[0] != '"' {
		o.fail(name, "must be a string")
		return "", false
	}
	s := unquote(v)
	if strings.ContainsRune(s, 0) {
		o.fail(name, "must not contain NUL characters")
		return "", false
	}
	return s, true
}

// text reads a required string that is not blank.
func (o *object) text(name string) string {
	v, ok := o.require(name)
	if !ok {
		return ""
	}
	s, ok := o.str(name, v)
	if ok && strings.TrimSpace(s) == "" {
		o.fail(name, "must not be empty")
	}
	return s
}

// optText reads an optional string; absent, null and "" are all nil.
func (o *object) optText(name string) *string {
	v, ok := o.take(name)
	if !ok {
		return nil
	}
	s, ok := o.str(name, v)
	if !ok || s == "" {
		return nil
	}
	return &s
}

// url reads an optional absolute http or https URL.
func (o *object) url(name string) *string {
	s := o.optText(name)
	if s == nil {
		return nil
	}
	u, err := url.Parse(*s)
	ok := err == nil && u.Hostname() != "" && (strings.EqualFold(u.Scheme, "http") || strings.EqualFold(u.Scheme, "https"))
	o.check(ok, name, "must be an absolute http or https URL")
	return s
}

// timestamp reads a required RFC 3339 date-time and returns it in UTC.
func (o *object) timestamp(name string) time.Time {
	v, ok := o.require(name)
	if !ok {
		return time.Time{}
	}
	s, ok := o.str(name, v)
	if !ok {
		return time.Time{}
	}
	// RFC 3339 allows a lower-case t and z; they are the only letters in it.
	t, err := db.ParseTimestamp(strings.ToUpper(s))
	if err != nil {
		o.fail(name, "must be an RFC 3339 timestamp such as 2026-01-02T15:04:05Z")
		return time.Time{}
	}
	t = t.UTC()
	o.check(t.Year() >= 1 && t.Year() <= 9999, name, "must be between years 0001 and 9999 in UTC")
	return t
}

// date reads a required calendar date YYYY-MM-DD.
func (o *object) date(name string) time.Time {
	v, ok := o.require(name)
	if !ok {
		return time.Time{}
	}
	s, ok := o.str(name, v)
	if !ok {
		return time.Time{}
	}
	d, err := time.Parse(time.DateOnly, s)
	if err != nil || d.Year() < 1 {
		o.fail(name, "must be a calendar date YYYY-MM-DD")
		return time.Time{}
	}
	return d
}

// money reads a required amount, a JSON number or a decimal string with at
// most two decimals, exactly (never through float64).
func (o *object) money(name string) db.Money {
	v, ok := o.require(name)
	if !ok {
		return 0
	}
	s := string(v)
	if v[0] == '"' {
		if s, ok = o.str(name, v); !ok {
			return 0
		}
	}
	m, err := db.ParseMoney(s)
	switch {
	case errors.Is(err, db.ErrMoneyRange):
		o.fail(name, "is too large: at most %d digits before the point (±%s.99)", db.MaxMoneyDigits, strings.Repeat("9", db.MaxMoneyDigits))
		return 0
	case err != nil:
		o.fail(name, "must be a decimal amount with at most two decimals and no exponent")
		return 0
	}
	return m
}

// optMoney is money for an optional amount; absent and null are nil.
func (o *object) optMoney(name string) *db.Money {
	if v, ok := o.members[name]; !ok || string(v) == "null" {
		o.used[name] = true
		return nil
	}
	m := o.money(name)
	return &m
}

// decimalText returns a member that is a JSON number or a string holding one.
func (o *object) decimalText(name string, v json.RawMessage) (string, bool) {
	if v[0] != '"' {
		return string(v), true
	}
	return o.str(name, v)
}

// coinAmount reads an optional non-negative quantity of coins, a JSON number
// or a decimal string with at most 8 decimals; absent and null are nil.
func (o *object) coinAmount(name string) *db.CoinAmount {
	v, ok := o.take(name)
	if !ok {
		return nil
	}
	s, ok := o.decimalText(name, v)
	if !ok {
		return nil
	}
	c, err := db.ParseCoinAmount(s)
	if err != nil || c < 0 {
		o.fail(name, "must be a non-negative decimal amount of coins with at most 8 decimals, below 10^10, and no exponent")
		return nil
	}
	return &c
}

// percent reads a required percentage from 0 to 999.99 with at most two
// decimals.
func (o *object) percent(name string) db.Percent {
	v, ok := o.require(name)
	if !ok {
		return 0
	}
	s, ok := o.decimalText(name, v)
	if !ok {
		return 0
	}
	p, err := db.ParsePercent(s)
	if err != nil {
		o.fail(name, "must be a percentage from 0 to 999.99 with at most two decimals (0.25 for 0.25%%)")
		return 0
	}
	return p
}

// ticker reads a required fund ticker, in any case, and returns it upper case.
func (o *object) ticker(name string) string {
	t := strings.ToUpper(o.text(name))
	if t != "" && !db.ValidTicker(t) {
		o.fail(name, "must be 1 to 7 letters A-Z or digits")
	}
	return t
}

// optAsset is asset for an optional member; absent and null are "".
func (o *object) optAsset(name string) db.Asset {
	if v, ok := o.members[name]; !ok || string(v) == "null" {
		o.used[name] = true
		return ""
	}
	return o.asset(name)
}

// boolean reads an optional JSON boolean; absent and null are false.
func (o *object) boolean(name string) bool {
	v, ok := o.take(name)
	if !ok {
		return false
	}
	o.check(string(v) == "true" || string(v) == "false", name, "must be true or false")
	return string(v) == "true"
}

// pane reads a required firehose pane.
func (o *object) pane(name string) db.Pane {
	p := db.Pane(o.text(name))
	if p != "" && !p.Valid() {
		o.fail(name, "must be one of %s", join(db.Panes))
	}
	return p
}

// asset reads a required ETF asset, in any case, and returns it upper case.
func (o *object) asset(name string) db.Asset {
	a := db.Asset(strings.ToUpper(o.text(name)))
	if a != "" && !a.Valid() {
		o.fail(name, "must be one of %s", join(db.Assets))
	}
	return a
}

func join[S ~string](values []S) string {
	s := make([]string, len(values))
	for i, v := range values {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// The bounds of raw beyond what jsonb refuses. A payload nested deeper
// than maxRawDepth is served as stored and breaks common clients' parsers
// (Python's stops at about a thousand levels, Rust's serde_json at 128).
// PostgreSQL writes raw out longer than it came in (a space after each
// colon and comma, and every number in full: 1e100000 is a hundred
// thousand digits), and the API serves it so: maxRawServed bounds that
// length, so that no item's raw is beyond what one page may hold.
const (
	maxRawDepth  = 64
	maxRawServed = 2 * maxLineBytes
)

// jsonObject reads an optional JSON object (absent or null give {}) and
// returns it re-encoded in a form jsonb accepts, refusing what jsonb cannot
// hold (NUL characters, numbers beyond numeric's range) and what the API
// would not serve well: nesting deeper than maxRawDepth, a text form
// longer than maxRawServed.
func (o *object) jsonObject(name string) json.RawMessage {
	v, ok := o.take(name)
	if !ok {
		return json.RawMessage("{}")
	}
	if depth := jsonDepth(v); depth > maxRawDepth {
		o.fail(name, "nested %d levels deep, more than the %d allowed", depth, maxRawDepth)
		return nil
	}
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber()
	if v[0] != '{' || dec.Decode(&obj) != nil {
		o.fail(name, "must be a JSON object")
		return nil
	}
	served, problem := jsonbShape(obj)
	if problem != "" {
		o.fail(name, "%s", problem)
		return nil
	}
	if served > maxRawServed {
		o.fail(name, "is %d bytes long as served (with a space after each : and , and numbers written out in full), more than the %d allowed", served, maxRawServed)
		return nil
	}
	// Re-encoding replaces lone UTF-16 surrogates (\ud800), which jsonb refuses,
	// as decoding them into text fields does.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(obj); err != nil {
		o.fail(name, "must be a JSON object")
		return nil
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// jsonDepth returns how deeply the valid JSON value v nests objects and
// arrays (0 for a scalar), without decoding it.
func jsonDepth(v []byte) int {
	depth, deepest := 0, 0
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			i = stringEnd(v, i) - 1
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}

// jsonbShape walks a decoded JSON value for what PostgreSQL's jsonb
// refuses, and returns the length of the text jsonb writes for it (what
// the API serves): members "k": v and elements joined by ", ", strings
// escaped as jsonb escapes them, numbers as numeric writes them.
func jsonbShape(v any) (int, string) {
	switch v := v.(type) {
	case nil:
		return len("null"), ""
	case bool:
		if v {
			return len("true"), ""
		}
		return len("false"), ""
	case string:
		if strings.ContainsRune(v, 0) {
			return 0, "must not contain NUL characters"
		}
		return jsonbStringLen(v), ""
	case json.Number:
		n, ok := numericLen(string(v))
		if !ok {
			return 0, "number " + string(v) + " is out of range"
		}
		return n, ""
	case []any:
		n := len("[]") + max(len(v)-1, 0)*len(", ")
		for _, e := range v {
			m, p := jsonbShape(e)
			if p != "" {
				return 0, p
			}
			n += m
		}
		return n, ""
	case map[string]any:
		n := len("{}") + max(len(v)-1, 0)*len(", ")
		for k, e := range v {
			kn, p := jsonbShape(k)
			if p != "" {
				return 0, p
			}
			m, p := jsonbShape(e)
			if p != "" {
				return 0, p
			}
			n += kn + len(": ") + m
		}
		return n, ""
	}
	return 0, fmt.Sprintf("unexpected JSON value %T", v)
}

// jsonbStringLen is the length of s as jsonb writes it: quoted, with \b,
// \f, \n, \r, \t, \" and \\ escaped in two bytes and the other control
// characters in six (\u001f).
func jsonbStringLen(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t' || c == '"' || c == '\\':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}

// numericLen returns the length of the JSON number n as PostgreSQL's
// numeric writes it (no exponent: the digits before the point, at least
// one, then the point and the scale's digits, a sign only when not zero),
// and whether it fits numeric at all (numericFits).
func numericLen(n string) (int, bool) {
	if !numericFits(n) {
		return 0, false
	}
	neg := strings.HasPrefix(n, "-")
	mantissa, exp, _ := strings.Cut(strings.ToLower(strings.TrimPrefix(n, "-")), "e")
	e, _ := strconv.ParseInt(exp, 10, 32) // numericFits parsed it
	whole, frac, _ := strings.Cut(mantissa, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	scale := max(int64(len(frac))-e, 0)
	intLen := int64(1)
	if digits != "" {
		intLen = max(int64(len(digits))-int64(len(frac))+e, 1)
	}
	out := intLen
	if scale > 0 {
		out += 1 + scale
	}
	if neg && digits != "" {
		out++
	}
	return int(out), true
}

// numericFits reports whether a JSON number fits PostgreSQL's numeric: at most
// 131072 digits before the decimal point and 16383 after.
func numericFits(n string) bool {
	mantissa, exp, hasExp := strings.Cut(strings.ToLower(strings.TrimPrefix(n, "-")), "e")
	e := int64(0)
	if hasExp {
		var err error
		if e, err = strconv.ParseInt(exp, 10, 32); err != nil {
			return false
		}
	}
	whole, frac, _ := strings.Cut(mantissa, ".")
	return int64(len(whole))+e <= 131072 && int64(len(frac))-e <= 16383
}
