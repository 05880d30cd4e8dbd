//go:build !linux

package rest

import (
	"net"
	"time"
)

// setDeadPeerTimeout does nothing where TCP_USER_TIMEOUT is not known: a
// vanished peer is found by TCP keep-alives and the write deadlines.
func setDeadPeerTimeout(net.Conn, time.Duration) {}
