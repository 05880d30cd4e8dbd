package auth

import (
	"fmt"
	"net/http"
	"net/netip"
	"strings"
)

// clientIPFunc returns how the client IP of a request is found: its TCP
// peer, or with trusted proxies the first untrusted address of
// X-Forwarded-For read from the right.
func clientIPFunc(trusted []string) (func(*http.Request) string, error) {
	prefixes := make([]netip.Prefix, 0, len(trusted))
	for _, t := range trusted {
		p, err := netip.ParsePrefix(t)
		if err != nil {
			return nil, fmt.Errorf("trusted proxy %q: %w", t, err)
		}
		prefixes = append(prefixes, p.Masked())
	}
	return func(r *http.Request) string {
		peer, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil {
			return r.RemoteAddr
		}
		ip := peer.Addr().Unmap()
		if len(prefixes) == 0 {
			return ip.String()
		}
		return forwardedClient(ip, r.Header.Values("X-Forwarded-For"), prefixes).String()
	}, nil
}

// forwardedClient walks the X-Forwarded-For chain from the peer leftwards
// while the hops are trusted proxies, and returns the first untrusted one.
// An unparsable hop ends the walk at the last trusted address seen.
func forwardedClient(peer netip.Addr, xff []string, trusted []netip.Prefix) netip.Addr {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	client := peer
	var hops []string
	for _, h := range xff {
		for hop := range strings.SplitSeq(h, ",") {
			hops = append(hops, strings.TrimSpace(hop))
		}
	}
	for i := len(hops) - 1; i >= 0 && isTrusted(client); i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			break
		}
		client = a.Unmap()
	}
	return client
}
