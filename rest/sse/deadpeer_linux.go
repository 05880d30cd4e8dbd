//go:build linux

package sse

import (
	"net"
	"time"

	"golang.org/x/sys/unix"
)

// SetDeadPeerTimeout makes the kernel end c once data it sent stays
// unacknowledged for d (TCP_USER_TIMEOUT): a client that vanished without
// closing (its network gone) fails the connection's next read or write
// then, instead of after the kernel's retransmissions give up (a quarter
// of an hour), and its stream's slot is freed.
func SetDeadPeerTimeout(c net.Conn, d time.Duration) {
	tc, ok := c.(*net.TCPConn)
	if !ok || d <= 0 {
		return
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, int(d.Milliseconds()))
	})
}
