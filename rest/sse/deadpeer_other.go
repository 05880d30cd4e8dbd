//go:build !linux

package sse

import (
	"net"
	"time"
)

// SetDeadPeerTimeout does nothing where TCP_USER_TIMEOUT is not known: a
// vanished peer is found by TCP keep-alives and the write deadlines.
func SetDeadPeerTimeout(net.Conn, time.Duration) {}
