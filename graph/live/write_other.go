//go:build !unix

package live

import "net"

// Writer takes nothing at once where there is no non-blocking write:
// every write goes to the caller's blocking path.
type Writer struct{}

// NewWriter returns the writer of conn.
func NewWriter(net.Conn) Writer { return Writer{} }

// TryWrite takes nothing.
func (Writer) TryWrite([]byte) (int, error) { return 0, nil }
