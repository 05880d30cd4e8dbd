//go:build unix

package live

import (
	"errors"
	"net"
	"syscall"
)

// Writer writes to a client's connection without ever blocking the
// caller: the sinks' fan-out writes one rendered page to thousands of
// connections, and one client that does not read must not hold up the
// others.
type Writer struct {
	raw syscall.RawConn // nil: nothing is written at once
}

// NewWriter returns the non-blocking writer of conn (a TCP or Unix
// connection; for any other, TryWrite takes nothing and every write goes
// to the caller's blocking path).
func NewWriter(conn net.Conn) Writer {
	switch conn.(type) {
	case *net.TCPConn, *net.UnixConn:
		if sc, ok := conn.(syscall.Conn); ok {
			raw, _ := sc.SyscallConn()
			return Writer{raw: raw}
		}
	}
	return Writer{}
}

// TryWrite writes what of b the kernel takes now, without waiting: a
// single pass of write(2) calls on the non-blocking socket, ending at
// EAGAIN. The caller writes the rest with a blocking write (in a goroutine
// of its own), timed.
func (w Writer) TryWrite(b []byte) (int, error) {
	if w.raw == nil {
		return 0, nil
	}
	written := 0
	var werr error
	err := w.raw.Write(func(fd uintptr) bool {
		for written < len(b) {
			n, err := syscall.Write(int(fd), b[written:])
			if n > 0 {
				written += n
			}
			switch {
			case err == nil:
				continue
			case errors.Is(err, syscall.EINTR):
				continue
			case errors.Is(err, syscall.EAGAIN):
			default:
				werr = err
			}
			break
		}
		return true // never wait for the socket to be writable
	})
	if err != nil {
		return written, err
	}
	return written, werr
}
