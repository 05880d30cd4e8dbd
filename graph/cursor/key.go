package cursor

import (
	"encoding/base64"
	"encoding/binary"
)

// Keyset cursors of two numbers, for lists ordered by a time and then an
// id (stories: by their latest item, then id). The same framing as Encode:
// a version, the key, a check bound to the connection.

const (
	keyVersion = 2
	keyLen     = 1 + 2*idLen + checkLen
)

// EncodeKey returns the cursor of the key (a, b) in connection.
func EncodeKey(connection string, a, b int64) string {
	var raw [keyLen]byte
	raw[0] = keyVersion
	binary.BigEndian.PutUint64(raw[1:], uint64(a))
	binary.BigEndian.PutUint64(raw[1+idLen:], uint64(b))
	sum := check(raw[0], connection, raw[1:1+2*idLen])
	copy(raw[1+2*idLen:], sum[:checkLen])
	return base64.RawURLEncoding.EncodeToString(raw[:])
}

// DecodeKey returns the key of a cursor made by EncodeKey for connection,
// or the error of an invalid cursor (apperr.Invalid on Param).
func DecodeKey(connection, s string) (a, b int64, err error) {
	if base64.RawURLEncoding.DecodedLen(len(s)) != keyLen {
		return 0, 0, invalid()
	}
	var raw [keyLen]byte
	if n, err := base64.RawURLEncoding.Strict().Decode(raw[:], []byte(s)); err != nil || n != keyLen {
		return 0, 0, invalid()
	}
	if raw[0] != keyVersion {
		return 0, 0, invalid()
	}
	sum := check(raw[0], connection, raw[1:1+2*idLen])
	if [checkLen]byte(sum[:checkLen]) != [checkLen]byte(raw[1+2*idLen:]) {
		return 0, 0, invalid()
	}
	a = int64(binary.BigEndian.Uint64(raw[1:]))
	b = int64(binary.BigEndian.Uint64(raw[1+idLen:]))
	if b <= 0 {
		return 0, 0, invalid()
	}
	return a, b, nil
}
