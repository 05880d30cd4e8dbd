package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// lookupFunc resolves a host name, like net.Resolver.LookupNetIP.
type lookupFunc func(ctx context.Context, host string) ([]netip.Addr, error)

// systemLookup resolves with the system resolver.
func systemLookup(ctx context.Context, host string) ([]netip.Addr, error) {
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// checkURL parses the --url value and refuses it unless its host is a
// loopback address or a name that resolves only to loopback addresses
// (127.0.0.0/8, ::1): this tool must never load another machine.
func checkURL(ctx context.Context, raw string, lookup lookupFunc) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("--url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("--url %q: scheme must be http or https", raw)
	}
	host := u.Hostname()
	if host == "" {
		return nil, fmt.Errorf("--url %q: no host", raw)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("--url %q: give the service root, without query or fragment", raw)
	}
	addrs, err := resolve(ctx, host, lookup)
	if err != nil {
		return nil, fmt.Errorf("--url %q: resolve %s: %w", raw, host, err)
	}
	for _, a := range addrs {
		if !a.Unmap().IsLoopback() {
			return nil, fmt.Errorf("--url %q: %s resolves to %s, which is not a loopback address: feedbench only loads services on this machine (127.0.0.0/8 or ::1)", raw, host, a)
		}
	}
	return u, nil
}

// resolve returns the addresses of host, which may be an IP literal.
func resolve(ctx context.Context, host string, lookup lookupFunc) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := lookup(ctx, host)
	if err != nil {
		return nil, err
	}
	if len(addrs) == 0 {
		return nil, errors.New("no addresses")
	}
	return addrs, nil
}

// loopbackOnly is a net.Dialer Control function that refuses every
// connection to a non-loopback address. It backs checkURL at the moment of
// connecting, so a name that resolves differently later (or a redirect) still
// cannot reach another machine.
func loopbackOnly(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to connect to %s: %w", address, err)
	}
	if !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("refusing to connect to %s: not a loopback address", address)
	}
	return nil
}

// newClient returns the HTTP client shared by discovery and the attacks:
// keep-alive connections (enough idle ones for every concurrent request),
// no proxy, no redirects, a per-request timeout, a dialer that connects
// only to loopback addresses, and stream catch-ups ended after their items
// (catchUpTransport).
func newClient(timeout time.Duration, idle int) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second, Control: loopbackOnly}
	return &http.Client{
		Timeout: timeout,
		Transport: catchUpTransport{next: &http.Transport{
			Proxy:               nil, // a proxy would carry the load off this machine
			DialContext:         dialer.DialContext,
			MaxIdleConnsPerHost: idle,
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: 5 * time.Second,
		}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
