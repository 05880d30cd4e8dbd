package rest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The executor writes its data object compactly, with the members in the
// order of the document's selection. The documents in queries/ select one
// root field, aliased "data" (an object or list) or "page" (a connection
// whose pageInfo comes before its nodes, aliased "data"), so the parts the
// envelope needs are found by their position; the items are never decoded.
// A shape that does not match (which would be a bug) falls back to decoding
// the small outer objects.

// member returns the value of the single member key of the JSON object b,
// which must be the executor's data object for a document with one root
// field: only the bytes around the value are checked, not the value itself.
func member(b []byte, key string) ([]byte, error) {
	if len(b) > len(key)+5 && b[0] == '{' && b[1] == '"' &&
		bytes.HasPrefix(b[2:], []byte(key)) && bytes.HasPrefix(b[2+len(key):], []byte(`":`)) &&
		b[len(b)-1] == '}' {
		return b[len(key)+4 : len(b)-1], nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode response data: %w", err)
	}
	v, ok := m[key]
	if !ok || len(m) != 1 {
		return nil, fmt.Errorf("response data has no single member %q", key)
	}
	return v, nil
}

// pageInfo is the part of a connection's pageInfo the envelope needs, and
// the connection's position where it has one.
type pageInfo struct {
	HasNextPage bool            `json:"hasNextPage"`
	EndCursor   json.RawMessage `json:"endCursor"` // a JSON string or null
	position    json.RawMessage // a JSON string or null; nil when not selected
}

// splitPage takes {"page":{"pageInfo":{…},"data":[…]}} apart, or
// {"page":{"position":…,"pageInfo":{…},"data":[…]}} (the polled lists).
func splitPage(b []byte) (items []byte, pi pageInfo, err error) {
	conn, err := member(b, "page")
	if err != nil {
		return nil, pi, err
	}
	if len(conn) < 2 || conn[0] != '{' {
		return nil, pi, fmt.Errorf("decode connection: not an object")
	}
	members := conn[1:] // the connection's members and its closing brace
	pos, rest, ok := leadingPosition(members)
	if ok {
		members = rest
	}
	items, pi, err = splitMembers(members)
	pi.position = pos
	return items, pi, err
}

// leadingPosition takes the position off a connection's members that start
// with it: its value, and the members after it. A position is a cursor
// (URL-safe base64, no escapes) or null.
func leadingPosition(members []byte) (pos, rest []byte, ok bool) {
	const head = `"position":`
	if !bytes.HasPrefix(members, []byte(head)) {
		return nil, nil, false
	}
	v := members[len(head):]
	n := 0
	switch {
	case bytes.HasPrefix(v, []byte("null")):
		n = 4
	case len(v) > 0 && v[0] == '"':
		end := bytes.IndexByte(v[1:], '"')
		if end < 0 || bytes.IndexByte(v[1:end+1], '\\') >= 0 {
			return nil, nil, false
		}
		n = end + 2
	default:
		return nil, nil, false
	}
	if len(v) <= n || v[n] != ',' {
		return nil, nil, false
	}
	return v[:n], v[n+1:], true
}

// splitMembers takes the members "pageInfo":{…},"data":[…]} of a
// connection (after its opening brace) apart.
func splitMembers(members []byte) (items []byte, pi pageInfo, err error) {
	const head, mid = `"pageInfo":`, `,"data":`
	if bytes.HasPrefix(members, []byte(head)) && members[len(members)-1] == '}' {
		rest := members[len(head) : len(members)-1]
		if end := objectEnd(rest); end > 0 && bytes.HasPrefix(rest[end:], []byte(mid)) {
			if err := json.Unmarshal(rest[:end], &pi); err == nil {
				return rest[end+len(mid):], pi, nil
			}
		}
	}
	var whole struct {
		PageInfo pageInfo        `json:"pageInfo"`
		Data     json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(append([]byte{'{'}, members...), &whole); err != nil || whole.Data == nil {
		return nil, pi, fmt.Errorf("decode connection: %w", err)
	}
	return whole.Data, whole.PageInfo, nil
}

// objectEnd returns the length of the JSON object at the start of b, or -1.
func objectEnd(b []byte) int {
	if len(b) == 0 || b[0] != '{' {
		return -1
	}
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return -1
}

// itemsPage is the start of the connection that a PagedItem's resource
// ends with. Its key cannot occur earlier in the object: inside a JSON
// string a quote is escaped, and the items come after it.
const itemsPage = `"items":{`

// liftItemsPage turns a resource ending with its items' connection,
// {…,"items":{"pageInfo":{…},"data":[…]}}, into the resource with the
// connection's items, {…,"items":[…]}, in place, and returns its pageInfo.
func liftItemsPage(b []byte) ([]byte, pageInfo, error) {
	at := bytes.LastIndex(b, []byte(itemsPage))
	if at < 0 || len(b) < at+len(itemsPage)+2 {
		return nil, pageInfo{}, fmt.Errorf("decode resource: no items connection")
	}
	start := at + len(itemsPage)
	nodes, pi, err := splitMembers(b[start : len(b)-1]) // without the resource's closing brace
	if err != nil {
		return nil, pi, err
	}
	// The nodes sit later in b than where they go: copy moves them down.
	end := at + len(`"items":`) + copy(b[at+len(`"items":`):], nodes)
	b[end] = '}'
	return b[:end+1], pi, nil
}
