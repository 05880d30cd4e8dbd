package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
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
	// sinceBound overrides sinceBoundWindow when positive (tests).
	sinceBound int
	// sourceGroups and sourceWalk override sourceGroupsFew and
	// sourceWalkRows when positive (tests).
	sourceGroups, sourceWalk int
	// streamStartRows overrides streamStartRows when positive (tests).
	streamStartRows int
	// cols caches the column lists of the list statements (columns.go).
	cols *columnSets
	// firehoseOldest caches the oldest firehose message's created_at for
	// the choice of a since statement (firehosesince.go).
	firehoseOldest *oldestHint
}

// NewStore returns a Store that queries bdb.
func NewStore(bdb *bun.DB) *Store {
	return &Store{db: bdb, cols: &columnSets{}, firehoseOldest: &oldestHint{}}
}

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
	// MaxBytes, when positive, bounds the long texts the page holds
	// (bound.go): the page ends early, with more reported, once the next
	// row would take them over it, and a first row alone over it is a
	// *TooLargeError. A caller tells a page ended early by its holding
	// fewer than Limit rows while more are reported.
	MaxBytes int64
}

// dir returns the comparison of the page's keyset bound and the direction
// of its order.
func (p Page) dir() (cmp, order string, bound int64) {
	if p.Backward {
		return ">", "ASC", p.Before
	}
	return "<", "DESC", p.After
}

// order returns the page's order on id, as the statement reads it.
func (p Page) order() string {
	_, order, _ := p.dir()
	return "id " + order
}

// where writes the page's keyset bound on alias.id, if any.
func (p Page) where(q *sqlBuilder, alias string) {
	if cmp, _, bound := p.dir(); bound > 0 {
		q.add(" AND "+alias+".id "+cmp+" ?", bound)
	}
}

// orderBy writes the page's order on alias.id.
func (p Page) orderBy(q *sqlBuilder, alias string) {
	_, order, _ := p.dir()
	q.add(" ORDER BY " + alias + ".id " + order)
}

// orderLimit writes the page's order and its limit+1 probe.
func (p Page) orderLimit(q *sqlBuilder, alias string) {
	p.orderBy(q, alias)
	q.add(" LIMIT " + strconv.Itoa(p.Limit+1))
}

// sqlBuilder assembles a statement from constant fragments and the
// arguments of their ? placeholders, which bun formats as literals.
type sqlBuilder struct {
	sb   strings.Builder
	args []any
	// boundWindow is sinceSQL's sinceBoundWindow (0: the constant).
	boundWindow int
	// sinceFromOldest says that the statement's since is at or before the
	// oldest row: it bounds nothing, so the page is read in id order with
	// since checked on each row, with no recent-rows gate and no bound.
	sinceFromOldest bool
	// sourceGroups and sourceWalk are firehoseBySource's sourceGroupsFew
	// and sourceWalkRows (0: the constants).
	sourceGroups, sourceWalk int
	// columns returns the columns a statement reads, qualified by alias
	// ("": unqualified); nil reads every column (alias.*).
	columns func(alias string) string
}

// newSQL returns a builder for a statement of s that reads the columns of
// model but those in omit (see columns.go).
func (s *Store) newSQL(model reflect.Type, omit []string) *sqlBuilder {
	return &sqlBuilder{boundWindow: s.sinceBound, sourceGroups: s.sourceGroups, sourceWalk: s.sourceWalk,
		columns: func(alias string) string { return s.columns(model, alias, omit) }}
}

// cols returns the columns the statement reads, qualified by alias ("":
// unqualified).
func (q *sqlBuilder) cols(alias string) string {
	if q.columns == nil {
		if alias == "" {
			return "*"
		}
		return alias + ".*"
	}
	return q.columns(alias)
}

// String returns the statement written so far.
func (q *sqlBuilder) String() string { return q.sb.String() }

// add appends a fragment and the arguments of its placeholders.
func (q *sqlBuilder) add(fragment string, args ...any) {
	q.sb.WriteString(fragment)
	q.args = append(q.args, args...)
}

// sinceWindow is how many rows at or after a since bound the recent branch
// of sinceSQL reads at most.
const sinceWindow = 1000

// sinceBoundWindow is how many entries of the created_at index sinceSQL's
// id-order branch reads at most to bound its walk by the smallest id at or
// after since (forward pages), or to find that few rows lie before since
// (backward pages).
const sinceBoundWindow = 20_000

// sinceSQL writes the page of a list filtered by created_at >= since (and
// by whatever filters writes) as two branches of which exactly one runs,
// chosen by counting the rows at or after since in the created_at index, up
// to sinceWindow+1:
//
//   - at most sinceWindow rows (the polling case: since a few seconds ago,
//     or in the future): those rows are read through the created_at index,
//     filtered, and the page is picked from them (a top-N sort of at most
//     sinceWindow rows);
//   - more: byID writes the page read in id order from the filter's own
//     index, with since checked on each row (see sinceFilter). The
//     created_at condition is written so that the planner cannot use the
//     created_at index there: it would otherwise sort all the rows since
//     since, possibly millions. The walk is bounded below by lo, an id no
//     larger than the smallest id among the rows at or after since (0: no
//     bound), computed only when this branch runs, from the created_at
//     index (index-only):
//   - forward pages: the smallest id itself when at most sinceBoundWindow
//     rows lie at or after since, else 0. So a filter with few rows since
//     since stops there instead of reading all its older rows.
//   - backward pages, which start from the oldest rows: 0 when at most
//     sinceBoundWindow rows lie before since, else the smallest id among
//     all the rows at or after since (one read of their index entries).
//
// Neither branch relies on ids growing with created_at for correctness.
// When they do (as in every feed), the second branch finds its page among
// the first rows it reads, and the bound stops it at since.
func sinceSQL(q *sqlBuilder, table string, since time.Time, p Page, filters func(q *sqlBuilder, alias string), byID func(q *sqlBuilder)) {
	since = clampTime(since)
	window := q.boundWindow
	if window <= 0 {
		window = sinceBoundWindow
	}
	q.add("WITH recent AS MATERIALIZED (SELECT count(*) AS n FROM (SELECT 1 FROM "+table+
		" WHERE created_at >= ? ORDER BY created_at LIMIT ?) c),\n", since, sinceWindow+1)
	if p.Backward {
		// OFFSET 0 keeps min(id) from being planned as a walk of the
		// primary key from the oldest row, which is what this avoids.
		q.add("bound AS MATERIALIZED (SELECT CASE WHEN (SELECT count(*) FROM (SELECT 1 FROM "+table+
			" WHERE created_at < ? ORDER BY created_at DESC LIMIT ?) c) <= ? THEN 0"+
			" ELSE (SELECT coalesce(min(c.id), 0) FROM (SELECT id FROM "+table+
			" WHERE created_at >= ? ORDER BY created_at OFFSET 0) c) END AS lo)\n",
			since, window+1, window, since)
	} else {
		q.add("bound AS MATERIALIZED (SELECT CASE WHEN count(*) <= ? THEN coalesce(min(c.id), 0) ELSE 0 END AS lo FROM (SELECT id FROM "+table+
			" WHERE created_at >= ? ORDER BY created_at LIMIT ?) c)\n", window, since, window+1)
	}
	// The recent rows carry fts too, for the full-text condition of
	// filters (a stored column, read, never recomputed), but only the
	// statement's columns leave the branch.
	q.add("SELECT u.* FROM (\n(SELECT "+q.cols("r")+" FROM (SELECT "+q.cols("")+", fts FROM "+table+
		" WHERE created_at >= ? ORDER BY created_at LIMIT ?) r WHERE (SELECT n FROM recent) <= ?",
		since, sinceWindow, sinceWindow)
	filters(q, "r")
	p.where(q, "r")
	p.orderLimit(q, "r")
	q.add(")\nUNION ALL\n(SELECT b.* FROM (")
	byID(q)
	q.add(") b WHERE (SELECT n FROM recent) > ?)\n) u", sinceWindow)
	p.orderBy(q, "u")
}

// sinceFilter writes, when since is set, created_at >= since on alias in a
// form no index matches (adding a zero interval changes no value), and the
// lower bound on alias.id of sinceSQL's bound CTE (0 when unknown), which
// every id-ordered index can use.
func sinceFilter(q *sqlBuilder, alias string, since time.Time) {
	if since.IsZero() {
		return
	}
	q.add(" AND "+alias+".created_at + interval '0' >= ?", clampTime(since))
	if !q.sinceFromOldest {
		q.add(" AND " + alias + ".id >= (SELECT lo FROM bound)")
	}
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
