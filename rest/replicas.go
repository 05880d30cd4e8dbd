package rest

import (
	"bytes"
	"strconv"
)

// withRateLimits returns health's data object with rate_limits added: the
// rate store's state. data may be a slice of a larger buffer, so the
// result is a copy.
func withRateLimits(data []byte, state string) []byte {
	obj := bytes.TrimRight(data, " \t\r\n")
	if len(obj) < 2 || obj[len(obj)-1] != '}' {
		return data
	}
	out := make([]byte, 0, len(obj)+32)
	out = append(out, obj[:len(obj)-1]...)
	if len(bytes.TrimSpace(obj[1:len(obj)-1])) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"rate_limits":`...)
	out = strconv.AppendQuote(out, state)
	return append(out, '}')
}
