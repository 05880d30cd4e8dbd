package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"
)

// The firehose is partitioned by the month (UTC) of created_at (migration
// 20261126300001): one partition per month, named firehose_messages_YYYYmMM,
// and a default partition for rows of months that have none yet.

// PartitionsAhead is how many months after the current one have their
// partition created ahead (by migrate and by the running service), so that
// a message never waits in the default partition for its month.
const PartitionsAhead = 2

// partitionName matches the name of a month's partition.
var partitionName = regexp.MustCompile(`^firehose_messages_(\d{4})m(\d{2})$`)

// FirehoseOldest returns the created_at of the oldest firehose message, the
// first that a page, a since or a stream can still give; false when the
// firehose is empty. Each partition answers from its created_at index.
func (s *Store) FirehoseOldest(ctx context.Context) (time.Time, bool, error) {
	var t sql.NullTime
	if err := s.db.NewRaw("SELECT min(created_at) FROM firehose_messages").Scan(ctx, &t); err != nil {
		return time.Time{}, false, fmt.Errorf("oldest firehose message: %w", err)
	}
	return t.Time, t.Valid, nil
}

// EnsureFirehosePartitions creates the partitions of the months from the
// one before now to PartitionsAhead after it, and of every month whose rows
// wait in the default partition (moving them in). It returns how many it
// created.
func EnsureFirehosePartitions(ctx context.Context, bdb *bun.DB, now time.Time) (int, error) {
	var n int
	err := withLockRetry(ctx, bdb, func(tx bun.Tx) error {
		return tx.NewRaw("SELECT firehose_partitions_ensure(?, ?)",
			now.UTC().AddDate(0, -1, 0), now.UTC().AddDate(0, PartitionsAhead, 0)).Scan(ctx, &n)
	})
	if err != nil {
		return 0, fmt.Errorf("create firehose partitions: %w", err)
	}
	return n, nil
}

// CreateFirehosePartition creates the partition of the month that holds at,
// unless it exists (moving in the month's rows waiting in the default
// partition).
func CreateFirehosePartition(ctx context.Context, bdb *bun.DB, at time.Time) error {
	err := withLockRetry(ctx, bdb, func(tx bun.Tx) error {
		_, err := tx.ExecContext(ctx, "SELECT firehose_partition_create(?)", at)
		return err
	})
	if err != nil {
		return fmt.Errorf("create the firehose partition of %s: %w", at.UTC().Format("2006-01"), err)
	}
	return nil
}

// Retention is how long firehose messages are kept: whole months are
// dropped once every message they hold is older. Zero keeps everything.
type Retention struct {
	Months int           // calendar months
	Span   time.Duration // or a duration (days, weeks)
}

// IsZero reports whether the retention keeps everything.
func (r Retention) IsZero() bool { return r.Months == 0 && r.Span == 0 }

// Cutoff is the time before which messages are no longer kept.
func (r Retention) Cutoff(now time.Time) time.Time {
	return now.UTC().AddDate(0, -r.Months, 0).Add(-r.Span)
}

// KeptSince is the oldest created_at the retention keeps at now: the start
// of the month that holds the cutoff, as only whole months are dropped
// (DropFirehoseBefore drops a month once it ends at or before the cutoff).
// The zero retention keeps everything: the zero time.
func (r Retention) KeptSince(now time.Time) time.Time {
	if r.IsZero() {
		return time.Time{}
	}
	c := r.Cutoff(now)
	return time.Date(c.Year(), c.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// String gives the retention as ParseRetention reads it.
func (r Retention) String() string {
	switch {
	case r.IsZero():
		return "0"
	case r.Months%12 == 0 && r.Span == 0:
		return strconv.Itoa(r.Months/12) + "y"
	case r.Span == 0:
		return strconv.Itoa(r.Months) + "mo"
	case r.Span%(24*time.Hour) == 0 && r.Months == 0:
		return strconv.FormatInt(int64(r.Span/(24*time.Hour)), 10) + "d"
	}
	return fmt.Sprintf("%dmo%s", r.Months, r.Span)
}

var retentionUnit = regexp.MustCompile(`^([0-9]+)(y|mo|w|d)$`)

// ParseRetention reads a retention: empty or 0 (keep everything), a number
// of years, months, weeks or days ("2y", "18mo", "12w", "90d"), or a Go
// duration ("2160h").
func ParseRetention(s string) (Retention, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "0" {
		return Retention{}, nil
	}
	if m := retentionUnit.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n > 1200 {
			return Retention{}, fmt.Errorf("retention %q: too long", s)
		}
		switch m[2] {
		case "y":
			return Retention{Months: 12 * n}, nil
		case "mo":
			return Retention{Months: n}, nil
		case "w":
			return Retention{Span: time.Duration(n) * 7 * 24 * time.Hour}, nil
		default:
			return Retention{Span: time.Duration(n) * 24 * time.Hour}, nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return Retention{}, fmt.Errorf("retention %q: want 0 (keep everything), a count of years, months, weeks or days (2y, 18mo, 12w, 90d) or a duration (2160h)", s)
	}
	return Retention{Span: d}, nil
}

// DroppedPartition is a month of the firehose that retention removed.
type DroppedPartition struct {
	Name string
	Rows int64 // side rows (ids, coins) removed with it: one per message and per ticker
	Took time.Duration
}

// sideBatch is how many messages of a dropped month have their side rows
// (firehose_message_ids, firehose_coins) removed per transaction.
const sideBatch = 10_000

// DropFirehoseBefore drops the firehose partitions of the months that end
// on or before cutoff, oldest first, and returns them. Each is detached
// from the partitioned table in a moment (a lock taken with a short
// timeout, retried, so that readers and writers never queue behind it for
// long); then its side rows are deleted in small batches, its stories
// brought up to date with the items kept (pruneDroppedStories) and the
// table dropped, while the API serves on. A month detached by a run that was
// interrupted is finished first. Rows waiting in the default partition are
// not looked at: EnsureFirehosePartitions first moves them into their
// month's partition.
func DropFirehoseBefore(ctx context.Context, bdb *bun.DB, cutoff time.Time, log io.Writer) ([]DroppedPartition, error) {
	var parts []struct {
		Name     string `bun:"name"`
		Attached bool   `bun:"attached"`
	}
	err := bdb.NewRaw(`SELECT c.relname AS name, c.relispartition AS attached FROM pg_class c
WHERE c.relkind = 'r' AND c.relnamespace = current_schema()::regnamespace AND c.relname ~ '^firehose_messages_[0-9]{4}m[0-9]{2}$'
ORDER BY c.relname`).Scan(ctx, &parts)
	if err != nil {
		return nil, fmt.Errorf("list firehose partitions: %w", err)
	}
	var dropped []DroppedPartition
	for _, p := range parts {
		end, ok := partitionEnd(p.Name)
		if !ok || (p.Attached && end.After(cutoff)) {
			continue
		}
		start := time.Now()
		if p.Attached {
			err := withLockRetry(ctx, bdb, func(tx bun.Tx) error {
				_, err := tx.ExecContext(ctx, "ALTER TABLE firehose_messages DETACH PARTITION "+quoteIdent(p.Name))
				return err
			})
			if err != nil {
				return dropped, fmt.Errorf("detach %s: %w", p.Name, err)
			}
		}
		fmt.Fprintf(log, "detached %s in %s\n", p.Name, time.Since(start).Round(time.Millisecond))
		n, err := dropSideRows(ctx, bdb, p.Name)
		if err != nil {
			return dropped, err
		}
		gone, changed, err := pruneDroppedStories(ctx, bdb, p.Name)
		if err != nil {
			return dropped, err
		}
		fmt.Fprintf(log, "stories of %s: %d deleted, %d recomputed\n", p.Name, gone, changed)
		if _, err := bdb.ExecContext(ctx, "DROP TABLE "+quoteIdent(p.Name)); err != nil {
			return dropped, fmt.Errorf("drop %s: %w", p.Name, err)
		}
		// The month's id blocks go last: while its rows were readable, a
		// page had to know where their ids lie.
		if _, err := bdb.ExecContext(ctx, "DELETE FROM firehose_id_blocks WHERE month = ?", end.AddDate(0, -1, 0)); err != nil {
			return dropped, fmt.Errorf("drop the id blocks of %s: %w", p.Name, err)
		}
		dropped = append(dropped, DroppedPartition{Name: p.Name, Rows: n, Took: time.Since(start)})
	}
	return dropped, nil
}

// dropSideRows deletes the ids and coins side rows of the messages of the
// detached partition part, in batches of its primary key's order.
func dropSideRows(ctx context.Context, bdb *bun.DB, part string) (int64, error) {
	var total int64
	last := int64(0)
	for {
		var res struct {
			Top sql.NullInt64 `bun:"top"`
			N   int64         `bun:"n"`
		}
		// A batch is a few thousand side rows, each found through its
		// table's primary key: the planner, which takes the unnested
		// tickers for ten per message, would rather hash the whole side
		// table (and compile the plan) on every batch.
		began := time.Now()
		err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, set := range []string{"jit = off", "enable_hashjoin = off", "enable_mergejoin = off"} {
				if _, err := tx.ExecContext(ctx, "SET LOCAL "+set); err != nil {
					return err
				}
			}
			return tx.NewRaw(`WITH b AS MATERIALIZED (SELECT id, created_at, coins FROM `+quoteIdent(part)+`
	WHERE id > ? ORDER BY id LIMIT ?),
ids AS (DELETE FROM firehose_message_ids i USING b WHERE i.id = b.id AND i.created_at = b.created_at RETURNING 1),
coins AS (DELETE FROM firehose_coins c USING b, unnest(b.coins) AS t WHERE c.ticker = t AND c.id = b.id RETURNING 1)
SELECT (SELECT max(id) FROM b) AS top, (SELECT count(*) FROM ids) + (SELECT count(*) FROM coins) AS n`, last, sideBatch).Scan(ctx, &res)
		})
		if err != nil {
			return total, fmt.Errorf("delete side rows of %s: %w", part, err)
		}
		total += res.N
		if !res.Top.Valid {
			return total, nil
		}
		last = res.Top.Int64
		// As long a pause as the batch took: the deletes (and their WAL)
		// take at most half of what the database's cores and disk give
		// to the API's reads meanwhile.
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(time.Since(began)):
		}
	}
}

// partitionEnd is the end (exclusive) of the month of a partition's name.
func partitionEnd(name string) (time.Time, bool) {
	m := partitionName.FindStringSubmatch(name)
	if m == nil {
		return time.Time{}, false
	}
	y, _ := strconv.Atoi(m[1])
	mo, _ := strconv.Atoi(m[2])
	return time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1, 0), true
}

// lockTries and lockTimeout bound how a schema change of the partitioned
// table waits for its lock: while it waits every query of the table queues
// behind it, so it gives up soon and tries again a little later.
const (
	lockTries   = 250
	lockTimeout = 20 * time.Millisecond
)

// withLockRetry runs f in a transaction with a short lock_timeout, again
// while it fails for the lock.
func withLockRetry(ctx context.Context, bdb *bun.DB, f func(tx bun.Tx) error) error {
	var err error
	for i := 0; i < lockTries; i++ {
		err = bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "SET LOCAL lock_timeout = "+strconv.Itoa(int(lockTimeout/time.Millisecond))); err != nil {
				return err
			}
			return f(tx)
		})
		if !isLockTimeout(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(min(time.Duration(i+1)*20*time.Millisecond, 500*time.Millisecond)):
		}
	}
	return err
}

func isLockTimeout(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "55P03"
}

// quoteIdent quotes a partition's name (which partitionName or the catalog
// query has already limited to letters, digits and underscores).
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

// KeepOptions configures KeepFirehose.
type KeepOptions struct {
	Retention Retention     // zero: keep everything
	Every     time.Duration // how often (default: an hour)
	Logger    *slog.Logger
	Now       func() time.Time // the clock (default time.Now)
}

// keepLockKey is the pg_advisory_lock key that lets one replica at a time
// keep the partitions ("fhkeep" in ASCII).
const keepLockKey = 0x66686b656570

// KeepFirehose keeps the firehose's partitions until ctx ends: now and every
// opts.Every it creates the months ahead (EnsureFirehosePartitions) and,
// with a retention, drops the months past it (DropFirehoseBefore). Replicas
// take turns through an advisory lock; one that finds it taken skips the
// round. Failures are logged and the round tried again later.
func KeepFirehose(ctx context.Context, bdb *bun.DB, opts KeepOptions) {
	if opts.Every <= 0 {
		opts.Every = time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	for {
		if err := KeepFirehoseOnce(ctx, bdb, opts); err != nil && ctx.Err() == nil {
			opts.Logger.Warn("firehose partitions", slog.Any("error", err))
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(opts.Every):
		}
	}
}

// KeepFirehoseOnce is one round of KeepFirehose.
func KeepFirehoseOnce(ctx context.Context, bdb *bun.DB, opts KeepOptions) error {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	conn, err := bdb.Conn(ctx)
	if err != nil {
		return fmt.Errorf("firehose partitions: %w", err)
	}
	defer conn.Close()
	var locked bool
	if err := conn.NewRaw("SELECT pg_try_advisory_lock(?)", keepLockKey).Scan(ctx, &locked); err != nil {
		return fmt.Errorf("firehose partitions: lock: %w", err)
	}
	if !locked {
		return nil
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(?)", keepLockKey) //nolint:errcheck // closing the connection releases it anyway
	now := opts.Now()
	n, err := EnsureFirehosePartitions(ctx, bdb, now)
	if err != nil {
		return err
	}
	if n > 0 && opts.Logger != nil {
		opts.Logger.Info("firehose partitions created", slog.Int("partitions", n))
	}
	if opts.Retention.IsZero() {
		return nil
	}
	dropped, err := DropFirehoseBefore(ctx, bdb, opts.Retention.Cutoff(now), io.Discard)
	for _, d := range dropped {
		if opts.Logger != nil {
			opts.Logger.Info("firehose month dropped", slog.String("partition", d.Name),
				slog.Int64("side_rows", d.Rows), slog.Duration("took", d.Took))
		}
	}
	return err
}
