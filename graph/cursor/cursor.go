// Package cursor encodes the opaque keyset cursors of feedapi's lists.
//
// A cursor carries the id of the last row a page showed and is bound to the
// connection that issued it ("posts", "firehose", "briefs",
// "brief:<id>:posts"). Its text is URL-safe base64 (no padding) of
//
//	version (1 byte) | id (8 bytes, big endian) | check (8 bytes)
//
// where check is the first 8 bytes of SHA-256(version | connection | id).
// The connection is not stored, only checked: a cursor presented to another
// connection fails the check exactly like a tampered one. The check guards
// against corruption and misuse, not against forgery; forging a cursor gains
// nothing, since any id is a legal keyset position.
package cursor

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"

	"github.com/feedapi/feedapi/graph/apperr"
)

// version is the current cursor format.
const version = 1

const (
	idLen    = 8
	checkLen = 8
	rawLen   = 1 + idLen + checkLen
)

// Param is the name of the parameter that cursor errors report.
const Param = "cursor"

// Encode returns the cursor of the row with the given id in connection.
func Encode(connection string, id int64) string {
	var raw [rawLen]byte
	raw[0] = version
	binary.BigEndian.PutUint64(raw[1:1+idLen], uint64(id))
	sum := check(raw[0], connection, raw[1:1+idLen])
	copy(raw[1+idLen:], sum[:checkLen])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// Decode returns the id carried by s, which must have been issued by
// connection. Any other string gives an apperr bad_request for Param.
func Decode(connection, s string) (int64, error) {
	if base64.RawURLEncoding.DecodedLen(len(s)) != rawLen {
		return 0, invalid()
	}
	// The decoder skips CR and LF, so a string of the right length may
	// still hold fewer bytes: each cursor has exactly one spelling.
	var raw [rawLen]byte
	if n, err := base64.RawURLEncoding.Strict().Decode(raw[:], []byte(s)); err != nil || n != rawLen {
		return 0, invalid()
	}
	if raw[0] != version {
		return 0, invalid()
	}
	sum := check(raw[0], connection, raw[1:1+idLen])
	if [checkLen]byte(sum[:checkLen]) != [checkLen]byte(raw[1+idLen:]) {
		return 0, invalid()
	}
	id := int64(binary.BigEndian.Uint64(raw[1 : 1+idLen]))
	if id <= 0 {
		return 0, invalid()
	}
	return id, nil
}

func check(v byte, connection string, id []byte) [sha256.Size]byte {
	buf := make([]byte, 0, 2+len(connection)+1+idLen)
	buf = append(buf, v, '|')
	buf = append(buf, connection...)
	buf = append(buf, '|')
	buf = append(buf, id...)
	return sha256.Sum256(buf)
}

// Invalid returns the error of a cursor that is invalid or was issued by
// another connection, for positions a caller refuses after Decode.
func Invalid() error { return invalid() }

func invalid() error {
	return apperr.Invalid(Param, "cursor is invalid or was issued by another endpoint")
}
