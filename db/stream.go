package db

import (
	"cmp"
	"context"
	"fmt"
	"time"
)

// Stream positions (migration 20261124100001_stream_positions).
//
// Every post and firehose message has a stream position (stream_pos),
// assigned by a trigger when it is inserted: 2^53 + txid·2^24 + n, where
// txid is the inserting transaction's id and n counts its rows. Rows older
// than the migration have their id as position. A stream reads the rows
// after a position in position order, but only below the bound of
// StreamBound: the positions of the transactions that had all ended when
// the bound was taken. Every later transaction has a larger id, so no row
// can ever appear below a bound once it has been taken, and a reader that
// only passes bounds never skips a row, whatever the ids of the rows and
// however concurrent writers interleave their commits. A row inserted by a
// transaction still running when the bound is taken (or by one that ended
// after an older transaction of the same database, still running, began)
// waits for the next bound: delivery waits for the oldest write
// transaction of the database to end, and never skips.
//
// An update gives the row a new position (feedapi_item_updated, migration
// 20261126200001_stories): the stream sends the edited row again, in order
// with the new rows; its position at insert stays in inserted_pos.

// StreamBase is the smallest position a row inserted after the migration
// can have (2^53); rows older than it have their id (< 2^53) as position.
const StreamBase = int64(1) << 53

// streamBoundSQL is the bound of the positions a reader may pass: the
// position of the oldest transaction still running in this database (its
// id among the snapshot's running ones, matched to the backend_xid of
// pg_stat_activity), or of the next transaction when none runs. Every
// transaction of this database below it had ended when pg_stat_activity
// was read, so a later statement sees all of their rows. On a read replica
// (in recovery) pg_stat_activity does not show the primary's transactions:
// there the bound is the snapshot's xmin, the oldest transaction running
// on the whole server, which is as exact but lets a long transaction of
// another database delay the streams. (xid8 grows by one per
// transaction; 2^39 transactions fit below 2^63. Prepared transactions,
// which pg_stat_activity does not show, are not used by feedapi.)
const streamBoundSQL = `SELECT 9007199254740992 + (CASE WHEN pg_is_in_recovery()
	THEN pg_snapshot_xmin(pg_current_snapshot())::text::bigint
	ELSE coalesce((SELECT min(x::text::bigint) FROM pg_snapshot_xip(pg_current_snapshot()) x
		WHERE (x::text::bigint & 4294967295) IN (SELECT backend_xid::text::bigint FROM pg_stat_activity
			WHERE datname = current_database() AND backend_xid IS NOT NULL)),
		pg_snapshot_xmax(pg_current_snapshot())::text::bigint)
	END << 24)`

// StreamBound is the exclusive bound of the positions that can be read
// safely by the statements that follow it, and whether rows at or beyond it are already visible in table
// "posts" or "firehose" (committed, but held back behind a transaction
// still running; read again shortly).
func (s *Store) StreamBound(ctx context.Context, kind string) (bound int64, pending bool, err error) {
	table, err := streamTable(kind)
	if err != nil {
		return 0, false, err
	}
	// max() rather than EXISTS (stream_pos >= bound): the newest position
	// is one index probe per partition, whereas a bound the planner cannot
	// see lets it take a third of the rows for matches and scan for one.
	err = s.db.QueryRowContext(ctx, `WITH b AS MATERIALIZED (`+streamBoundSQL+` AS bound)
		SELECT bound, coalesce((SELECT max(stream_pos) FROM `+table+`) >= b.bound, false) FROM b`).Scan(&bound, &pending)
	if err != nil {
		return 0, false, fmt.Errorf("stream bound of %s: %w", kind, err)
	}
	return bound, pending, nil
}

func streamTable(kind string) (string, error) {
	switch kind {
	case "posts":
		return "posts", nil
	case "firehose":
		return "firehose_messages", nil
	}
	return "", fmt.Errorf("no stream of %q", kind)
}

// StreamRange selects the rows of a stream with After < position < Bound,
// in position order (newest first when Newest is set), at most Limit of
// them (and one more, to tell whether more follow).
type StreamRange struct {
	After, Bound int64
	Limit        int
	Newest       bool
	// MaxBytes, when positive, bounds the long texts the read holds, as
	// Page.MaxBytes does: the read ends early, with more rows to follow,
	// once the next row would take them over it, and a first row alone
	// over it is a *TooLargeError.
	MaxBytes int64
}

// orderBy is the range's order of positions.
func (r StreamRange) orderBy() string {
	if r.Newest {
		return "stream_pos DESC"
	}
	return "stream_pos"
}

// order writes the range's ORDER BY and LIMIT on alias's positions.
func (r StreamRange) order(q *sqlBuilder, alias string) {
	q.add(" ORDER BY "+alias+"."+r.orderBy()+" LIMIT ?", r.Limit+1)
}

// StreamStart returns the position just before the first row created at or
// after since, in the stream of kind ("posts" or "firehose"): a stream
// that starts there sends every row created since then (with a since
// filter) and then the rows that arrive. A row changed since it was
// inserted counts at its position at insert (inserted_pos, always below its
// stream_pos), so that a row created since then is new to the stream's
// reader.
//
// No index gives the smallest position of a created_at range, so it takes
// the cheaper of two exact reads: the rows since since, in created_at
// order, when there are fewer than streamStartRows of them (a recent
// since); else the first entry since since of two indexes in position
// order (migration 20261126470001_stream_start), which reads at most the
// entries of since's own month before it.
func (s *Store) StreamStart(ctx context.Context, kind string, since time.Time) (int64, error) {
	table, err := streamTable(kind)
	if err != nil {
		return 0, err
	}
	since = clampTime(since)
	limit := cmp.Or(s.streamStartRows, streamStartRows)
	var n int
	var pos int64
	err = s.db.QueryRowContext(ctx, streamStartRecentSQL(table), since, limit).Scan(&n, &pos)
	if err == nil && n >= limit {
		err = s.db.QueryRowContext(ctx, streamStartSQL(table), since, since).Scan(&pos)
	}
	if err != nil {
		return 0, fmt.Errorf("stream start of %s: %w", kind, err)
	}
	return pos, nil
}

// streamStartRows is how many rows since since StreamStart reads before it
// takes the indexes in position order instead.
const streamStartRows = 20_000

// streamStartRecentSQL is StreamStart's read of the rows since since (the
// first argument), at most the second argument of them: how many it read,
// and the start they give.
func streamStartRecentSQL(table string) string {
	return `SELECT count(*), coalesce(min(coalesce(inserted_pos, stream_pos)), 9223372036854775807) - 1
		FROM (SELECT inserted_pos, stream_pos FROM ` + table + ` WHERE created_at >= ? ORDER BY created_at LIMIT ?) r`
}

// streamStartSQL is StreamStart's read through the indexes in position
// order; both arguments are since.
func streamStartSQL(table string) string {
	return `SELECT coalesce(least(
		(SELECT min(stream_pos) FROM ` + table + ` WHERE created_at >= ?),
		(SELECT min(inserted_pos) FROM ` + table + ` WHERE inserted_pos IS NOT NULL AND created_at >= ?)),
		9223372036854775807) - 1`
}

// redelivery is the column that tells, of a row read after a position
// (the first argument), whether it was first stored at or before that
// position: its reader was given it then, and reads it again because an
// update gave it a new position.
func redelivery(alias string) string {
	return "coalesce(" + alias + ".inserted_pos <= ?, false) AS redelivery"
}

// StreamPosts returns the posts of r matching f (every filter of the list:
// source, since, coins, q, since_id), in position order, and whether more
// follow below r.Bound.
func (s *Store) StreamPosts(ctx context.Context, f PostFilter, r StreamRange) ([]Post, bool, error) {
	q := s.newSQL(postType, f.Omit)
	f.collapse()
	q.add("SELECT "+q.cols("p")+", p.stream_pos, "+redelivery("p")+" FROM posts p WHERE p.stream_pos > ? AND p.stream_pos < ?", r.After, r.After, r.Bound)
	if f.Source != "" {
		q.add(" AND p.source = ?", f.Source)
	}
	if !f.Since.IsZero() {
		q.add(" AND p.created_at >= ?", clampTime(f.Since))
	}
	f.SearchFilter.streamWhere(q, "p", postCoins)
	r.order(q, "p")
	q = s.boundBytes(q, postType, f.Omit, []string{"stream_pos", "redelivery"}, r.orderBy(), r.MaxBytes)
	rows, sizes, err := queryRows[Post](ctx, s, r.Limit+1, q.String(), q.args...)
	if err != nil {
		return nil, false, fmt.Errorf("stream posts: %w", err)
	}
	rows, cut, err := cutBySize(rows, sizes, r.MaxBytes, postID)
	if err != nil {
		return nil, false, fmt.Errorf("stream posts: %w", err)
	}
	if len(rows) > r.Limit {
		return rows[:r.Limit], true, nil
	}
	return rows, cut, nil
}

// StreamFirehose returns the firehose messages of r matching f (every
// filter of the list), in position order, and whether more follow below
// r.Bound.
func (s *Store) StreamFirehose(ctx context.Context, f FirehoseFilter, r StreamRange) ([]FirehoseMessage, bool, error) {
	q := s.newSQL(firehoseType, f.Omit)
	f.collapse()
	q.add("SELECT "+q.cols("m")+", m.stream_pos, "+redelivery("m")+" FROM firehose_messages m WHERE m.stream_pos > ? AND m.stream_pos < ?", r.After, r.After, r.Bound)
	if f.Pane != "" {
		q.add(" AND m.pane = ?", string(f.Pane))
	}
	if f.Important {
		q.add(" AND m.important")
	}
	if f.Source != "" {
		q.add(" AND m.source ILIKE ?", ContainsPattern(f.Source))
	}
	if !f.Since.IsZero() {
		q.add(" AND m.created_at >= ?", clampTime(f.Since))
	}
	f.SearchFilter.streamWhere(q, "m", firehoseCoins)
	r.order(q, "m")
	q = s.boundBytes(q, firehoseType, f.Omit, []string{"stream_pos", "redelivery"}, r.orderBy(), r.MaxBytes)
	rows, sizes, err := queryRows[FirehoseMessage](ctx, s, r.Limit+1, q.String(), q.args...)
	if err != nil {
		return nil, false, fmt.Errorf("stream firehose: %w", err)
	}
	rows, cut, err := cutBySize(rows, sizes, r.MaxBytes, messageID)
	if err != nil {
		return nil, false, fmt.Errorf("stream firehose: %w", err)
	}
	if len(rows) > r.Limit {
		return rows[:r.Limit], true, nil
	}
	return rows, cut, nil
}
