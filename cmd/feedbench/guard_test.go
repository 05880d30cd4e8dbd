package main

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

// fakeLookup resolves from a fixed table, so that the test needs no DNS.
func fakeLookup(_ context.Context, host string) ([]netip.Addr, error) {
	table := map[string][]string{
		"localhost":      {"127.0.0.1", "::1"},
		"example.com":    {"93.184.215.14", "2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
		"split.internal": {"127.0.0.1", "10.1.2.3"},
	}
	addrs, ok := table[host]
	if !ok {
		return nil, errors.New("no such host")
	}
	var out []netip.Addr
	for _, a := range addrs {
		out = append(out, netip.MustParseAddr(a))
	}
	return out, nil
}

func TestCheckURL(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string // "" to accept, else part of the error
	}{
		{"http://127.0.0.1:8080", ""},
		{"http://127.3.2.1:8080/", ""},
		{"http://localhost:8080", ""},
		{"http://[::1]:8080", ""},
		{"https://localhost", ""},
		{"http://10.0.0.1:8080", "not a loopback address"},
		{"http://example.com", "not a loopback address"},
		{"http://split.internal:8080", "10.1.2.3, which is not a loopback address"},
		{"http://[::ffff:10.0.0.1]:8080", "not a loopback address"},
		{"http://0.0.0.0:8080", "not a loopback address"},
		{"http://nowhere.invalid", "no such host"},
		{"ftp://127.0.0.1", "scheme must be http or https"},
		{"localhost:8080", "scheme must be http or https"},
		{"http://127.0.0.1:8080/?limit=1", "without query"},
	} {
		t.Run(tc.url, func(t *testing.T) {
			_, err := checkURL(context.Background(), tc.url, fakeLookup)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("got %v, want it accepted", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestCheckURLSystemResolver accepts localhost through the real resolver,
// as a user's command line would.
func TestCheckURLSystemResolver(t *testing.T) {
	if _, err := checkURL(context.Background(), "http://localhost:8080", systemLookup); err != nil {
		t.Errorf("localhost: %v", err)
	}
}

func TestLoopbackOnlyDialGuard(t *testing.T) {
	for addr, ok := range map[string]bool{
		"127.0.0.1:8080":          true,
		"[::1]:8080":              true,
		"[::ffff:127.0.0.1]:8080": true,
		"10.0.0.1:8080":           false,
		"[2606:2800::1]:443":      false,
		"192.168.1.1:80":          false,
	} {
		if err := loopbackOnly("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("%s: got %v, want allowed=%v", addr, err, ok)
		}
	}
}
