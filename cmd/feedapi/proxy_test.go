package main

import (
	"net"
	"sync"
	"testing"
	"time"
)

// faultProxy is a TCP proxy on loopback in front of a server (PostgreSQL,
// Redis) that a test can cut, restore and slow down, to play an outage or a
// slow network without touching the shared server itself.
type faultProxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	mode    cutMode
	delay   time.Duration // added before each chunk sent to the server
	conns   map[net.Conn]struct{}
	traffic chan struct{} // a tick per chunk sent to the server while delayed
}

// cutMode is what a cut proxy does with connections.
type cutMode int

const (
	open      cutMode = iota // forward
	refuse                   // close new connections at once
	blackhole                // accept new connections and never answer
)

func (m cutMode) String() string {
	return [...]string{"open", "refuse", "blackhole"}[m]
}

// newFaultProxy listens on 127.0.0.1 and forwards to target until the test ends.
func newFaultProxy(t testing.TB, target string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, traffic: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { p.handle(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.closeAll()
		wg.Wait()
	})
	return p
}

// Addr is the proxy's host:port.
func (p *faultProxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every live connection and treats new ones as mode says.
func (p *faultProxy) Cut(mode cutMode) {
	p.mu.Lock()
	p.mode = mode
	p.mu.Unlock()
	p.closeAll()
}

// Restore forwards new connections again. Connections held by a blackhole
// are closed: the client has given up on them.
func (p *faultProxy) Restore() {
	p.mu.Lock()
	p.mode = open
	p.mu.Unlock()
	p.closeAll()
}

// SetDelay delays every chunk sent to the server by d (0: none).
func (p *faultProxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// Traffic ticks when a delayed chunk is on its way to the server: a request
// is then in flight at the database.
func (p *faultProxy) Traffic() <-chan struct{} { return p.traffic }

func (p *faultProxy) closeAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// track registers live connections, so that Cut can close them. It
// reports false, closing them, when the proxy was cut meanwhile.
func (p *faultProxy) track(forward bool, cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if forward && p.mode != open {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = struct{}{}
	}
	return true
}

func (p *faultProxy) handle(client net.Conn) {
	p.mu.Lock()
	mode := p.mode
	p.mu.Unlock()
	switch mode {
	case refuse:
		client.Close()
		return
	case blackhole:
		p.track(false, client) // held open, unread, until Restore or the end
		return
	}
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(true, client, server) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { p.pipe(server, client, true); done <- struct{}{} }()
	go func() { p.pipe(client, server, false); done <- struct{}{} }()
	<-done
	client.Close()
	server.Close()
	<-done
}

// pipe copies src to dst; toServer chunks get the configured delay.
func (p *faultProxy) pipe(dst, src net.Conn, toServer bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if toServer {
				p.mu.Lock()
				d := p.delay
				p.mu.Unlock()
				if d > 0 {
					select {
					case p.traffic <- struct{}{}:
					default:
					}
					time.Sleep(d)
				}
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}
