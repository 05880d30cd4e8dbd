package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"
)

// minTime is the earliest bound a filter passes to PostgreSQL, whose text
// form of dates (the one bun writes) has no year 0: 0000-01-01 is "out of
// range". Nothing is stored before it, so an earlier bound selects the same
// rows.
var minTime = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)

// clampTime returns t, or minTime when t is earlier.
func clampTime(t time.Time) time.Time {
	if t.Before(minTime) {
		return minTime
	}
	return t
}

// Store runs feedapi's read queries. It is safe for concurrent use.
type Store struct {
	db *bun.DB
}

// NewStore returns a Store that queries bdb.
func NewStore(bdb *bun.DB) *Store { return &Store{db: bdb} }

// DB returns the underlying connection pool.
func (s *Store) DB() *bun.DB { return s.db }

// Ping checks that the database answers within ctx.
func (s *Store) Ping(ctx context.Context) error { return Ping(ctx, s.db) }

// Page selects one keyset page of a list ordered by id descending (newest
// first). Forward pages (Backward false) hold the Limit newest rows with
// id < After (all rows when After is 0); backward pages hold the Limit oldest
// rows with id > Before (all rows when Before is 0), still returned newest
// first. Offsets are never used.
type Page struct {
	Limit    int
	After    int64
	Before   int64
	Backward bool
}

// apply adds the page's keyset bound, order and limit+1 probe to q. The id
// column is qualified by alias when it is not empty.
func (p Page) apply(q *bun.SelectQuery, alias string) *bun.SelectQuery {
	col := bun.Ident("id")
	if alias != "" {
		col = bun.Ident(alias + ".id")
	}
	if p.Backward {
		if p.Before > 0 {
			q = q.Where("? > ?", col, p.Before)
		}
		q = q.OrderExpr("? ASC", col)
	} else {
		if p.After > 0 {
			q = q.Where("? < ?", col, p.After)
		}
		q = q.OrderExpr("? DESC", col)
	}
	return q.Limit(int64(p.Limit) + 1)
}

// trim cuts the limit+1 probe row and restores newest-first order. more says
// whether rows exist beyond the page in its direction.
func trim[T any](rows []T, p Page) (page []T, more bool) {
	if len(rows) > p.Limit {
		rows, more = rows[:p.Limit], true
	}
	if p.Backward {
		slices.Reverse(rows)
	}
	return rows, more
}

func (p Page) validate() error {
	if p.Limit < 1 {
		return fmt.Errorf("page limit %d: must be positive", p.Limit)
	}
	return nil
}

// notFound turns sql.ErrNoRows into ErrNotFound.
func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}
