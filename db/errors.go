package db

import "errors"

// ErrNotFound is returned when a single-row lookup finds no row.
// The store converts sql.ErrNoRows to it at its boundary.
var ErrNotFound = errors.New("not found")
