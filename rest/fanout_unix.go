//go:build unix

package rest

import (
	"errors"
	"syscall"
)

// tryWrite writes what of b the kernel takes now, without waiting: a
// single pass of write(2) calls on the non-blocking socket, ending at
// EAGAIN.
func (c *rawSink) tryWrite(b []byte) (int, error) {
	if c.raw == nil {
		return 0, nil
	}
	written := 0
	var werr error
	err := c.raw.Write(func(fd uintptr) bool {
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
