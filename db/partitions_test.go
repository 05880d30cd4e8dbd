package db_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/db/importer"
	"github.com/feedapi/feedapi/db/seed"
)

// emptyFirehose returns a test database whose firehose is empty.
func emptyFirehose(t *testing.T) *bun.DB {
	t.Helper()
	bdb := dbtest.New(t)
	if _, err := bdb.ExecContext(context.Background(), "TRUNCATE firehose_messages"); err != nil {
		t.Fatal(err)
	}
	return bdb
}

// addMessages inserts messages with the given ids and times (and coins, if
// any), in one statement.
func addMessages(t *testing.T, idb bun.IDB, at map[int64]time.Time, coins map[int64]string) {
	t.Helper()
	var values []string
	var args []any
	for id, ts := range at {
		c := "NULL"
		if coins[id] != "" {
			c = "ARRAY['" + coins[id] + "']"
		}
		values = append(values, fmt.Sprintf("(?, 'news', 'src', 'message', ?, %s)", c))
		args = append(args, id, ts)
	}
	_, err := idb.ExecContext(context.Background(), "INSERT INTO firehose_messages (id, pane, source, title, created_at, coins) VALUES "+
		strings.Join(values, ", "), args...)
	if err != nil {
		t.Fatalf("insert messages: %v", err)
	}
}

// partitionOf returns the partition that holds message id.
func partitionOf(t *testing.T, bdb *bun.DB, id int64) string {
	t.Helper()
	var part string
	if err := bdb.NewRaw("SELECT tableoid::regclass::text FROM firehose_messages WHERE id = ?", id).Scan(context.Background(), &part); err != nil {
		t.Fatalf("partition of %d: %v", id, err)
	}
	return part
}

// pageIDs returns the ids of one page of the firehose, newest first.
func pageIDs(t *testing.T, s *db.Store, f db.FirehoseFilter, p db.Page) []int64 {
	t.Helper()
	rows, _, err := s.ListFirehose(context.Background(), f, p)
	if err != nil {
		t.Fatalf("list firehose %+v %+v: %v", f, p, err)
	}
	ids := []int64{}
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

func exists(t *testing.T, bdb *bun.DB, table string) bool {
	t.Helper()
	var ok bool
	if err := bdb.NewRaw("SELECT to_regclass(?) IS NOT NULL", table).Scan(context.Background(), &ok); err != nil {
		t.Fatal(err)
	}
	return ok
}

// TestFirehoseMonthBoundary checks that the months ahead exist before the
// clock reaches them, that a message lands in the partition of its month on
// either side of midnight, that one of a month without a partition waits
// readable in the default partition until the upkeep moves it, and that ids
// stay unique across partitions.
func TestFirehoseMonthBoundary(t *testing.T) {
	t.Parallel()
	bdb := emptyFirehose(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	lastSecond := time.Date(2027, 1, 31, 23, 59, 59, 0, time.UTC)

	if _, err := db.EnsureFirehosePartitions(ctx, bdb, lastSecond); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"2027m01", "2027m02", "2027m03"} {
		if !exists(t, bdb, "firehose_messages_"+m) {
			t.Errorf("no partition for %s on %s", m, lastSecond)
		}
	}

	// One transaction, three partitions: distinct stream positions.
	err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		addMessages(t, tx, map[int64]time.Time{
			1: lastSecond.Add(999 * time.Millisecond),
			2: lastSecond.Add(time.Second),
			3: time.Date(2027, 7, 15, 12, 0, 0, 0, time.UTC),
		}, map[int64]string{3: "JULC"})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[int64]string{1: "firehose_messages_2027m01", 2: "firehose_messages_2027m02", 3: "firehose_messages_default"} {
		if got := partitionOf(t, bdb, id); got != want {
			t.Errorf("message %d is in %s, want %s", id, got, want)
		}
	}
	var positions int
	if err := bdb.NewRaw("SELECT count(DISTINCT stream_pos) FROM firehose_messages").Scan(ctx, &positions); err != nil {
		t.Fatal(err)
	}
	if positions != 3 {
		t.Errorf("3 messages of one transaction have %d distinct stream positions", positions)
	}
	read := func(step string) {
		t.Helper()
		if got := pageIDs(t, s, db.FirehoseFilter{}, db.Page{Limit: 10}); !slices.Equal(got, []int64{3, 2, 1}) {
			t.Errorf("%s: first page %v, want [3 2 1]", step, got)
		}
		if got := pageIDs(t, s, db.FirehoseFilter{Since: lastSecond.Add(time.Second)}, db.Page{Limit: 10}); !slices.Equal(got, []int64{3, 2}) {
			t.Errorf("%s: since midnight %v, want [3 2]", step, got)
		}
		if got := pageIDs(t, s, db.FirehoseFilter{SearchFilter: db.SearchFilter{Coins: []string{"JULC"}}}, db.Page{Limit: 10}); !slices.Equal(got, []int64{3}) {
			t.Errorf("%s: coins JULC %v, want [3]", step, got)
		}
	}
	read("in the default partition")

	// The service's round moves it into the partition of its month.
	if err := db.KeepFirehoseOnce(ctx, bdb, db.KeepOptions{Now: func() time.Time { return lastSecond }}); err != nil {
		t.Fatal(err)
	}
	if got := partitionOf(t, bdb, 3); got != "firehose_messages_2027m07" {
		t.Errorf("after the upkeep, message 3 is in %s, want firehose_messages_2027m07", got)
	}
	read("after the upkeep")

	// An id is one message, whatever partition its time falls in.
	_, err = bdb.ExecContext(ctx, "INSERT INTO firehose_messages (id, pane, source, created_at) VALUES (2, 'news', 'src', '2026-12-05T00:00:00Z')")
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Errorf("a second message with id 2 in another month: %v, want a unique violation", err)
	}
	// The importer moves a message whose time changed, across midnight.
	res, err := importer.Import(ctx, bdb, importer.KindFirehose,
		strings.NewReader(`{"id":1,"pane":"news","source":"src","title":"moved","created_at":"2027-02-01T00:00:01Z"}`+"\n"), importer.Options{})
	if err != nil || res.Imported != 1 {
		t.Fatalf("import: %+v %v", res, err)
	}
	if got := partitionOf(t, bdb, 1); got != "firehose_messages_2027m02" {
		t.Errorf("re-imported with a February time, message 1 is in %s", got)
	}
	var n, ids int
	if err := bdb.NewRaw("SELECT (SELECT count(*) FROM firehose_messages), (SELECT count(*) FROM firehose_message_ids)").Scan(ctx, &n, &ids); err != nil {
		t.Fatal(err)
	}
	if n != 3 || ids != 3 {
		t.Errorf("%d messages and %d ids, want 3 and 3", n, ids)
	}
	// An import of an old month creates its partition first.
	res, err = importer.Import(ctx, bdb, importer.KindFirehose,
		strings.NewReader(`{"id":4,"pane":"news","source":"src","title":"old","created_at":"2025-03-10T00:00:00Z"}`+"\n"), importer.Options{})
	if err != nil || res.Imported != 1 {
		t.Fatalf("import: %+v %v", res, err)
	}
	if got := partitionOf(t, bdb, 4); got != "firehose_messages_2025m03" {
		t.Errorf("imported into March 2025, message 4 is in %s", got)
	}
}

// TestFirehoseRetentionEdges checks that retention drops exactly the months
// wholly before the cutoff, with their side rows, and that the oldest
// message, a since and cursors before it then give exact answers.
func TestFirehoseRetentionEdges(t *testing.T) {
	t.Parallel()
	bdb := emptyFirehose(t)
	s := db.NewStore(bdb)
	ctx := context.Background()
	aug := func(d, h int) time.Time { return time.Date(2026, 8, d, h, 0, 0, 0, time.UTC) }
	sep := func(d, h int) time.Time { return time.Date(2026, 9, d, h, 0, 0, 0, time.UTC) }
	addMessages(t, bdb, map[int64]time.Time{
		10: aug(1, 0), 11: aug(15, 0), 12: time.Date(2026, 8, 31, 23, 59, 59, 999_000_000, time.UTC),
		20: sep(1, 0), 21: sep(10, 0), 22: sep(30, 0),
	}, map[int64]string{10: "AUGC", 12: "BOTH", 21: "BOTH"})
	if _, err := db.EnsureFirehosePartitions(ctx, bdb, time.Now()); err != nil {
		t.Fatal(err)
	}
	if got := partitionOf(t, bdb, 12); got != "firehose_messages_2026m08" {
		t.Fatalf("message 12 is in %s", got)
	}

	// A cutoff inside September drops August only; one on the first of
	// September too (August ends there).
	for _, cutoff := range []time.Time{sep(1, 0), sep(20, 0)} {
		dropped, err := db.DropFirehoseBefore(ctx, bdb, cutoff, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range dropped {
			names = append(names, d.Name)
		}
		if cutoff.Equal(sep(1, 0)) && !slices.Equal(names, []string{"firehose_messages_2026m08"}) {
			t.Errorf("cutoff %s dropped %v, want August", cutoff, names)
		}
		if cutoff.Equal(sep(20, 0)) && len(names) != 0 {
			t.Errorf("cutoff %s dropped %v, want nothing (September is not over)", cutoff, names)
		}
	}
	if exists(t, bdb, "firehose_messages_2026m08") || !exists(t, bdb, "firehose_messages_2026m09") {
		t.Errorf("after retention: August exists %v, September %v",
			exists(t, bdb, "firehose_messages_2026m08"), exists(t, bdb, "firehose_messages_2026m09"))
	}

	oldest, ok, err := s.FirehoseOldest(ctx)
	if err != nil || !ok || !oldest.Equal(sep(1, 0)) {
		t.Errorf("oldest: %v %v %v, want %s", oldest, ok, err, sep(1, 0))
	}
	all := []int64{22, 21, 20}
	for _, c := range []struct {
		name string
		f    db.FirehoseFilter
		p    db.Page
		want []int64
	}{
		{"since before the oldest", db.FirehoseFilter{Since: aug(1, 0)}, db.Page{Limit: 10}, all},
		{"since the oldest", db.FirehoseFilter{Since: sep(1, 0)}, db.Page{Limit: 10}, all},
		{"older than a dropped cursor", db.FirehoseFilter{}, db.Page{Limit: 10, After: 11}, []int64{}},
		{"newer than a dropped cursor", db.FirehoseFilter{}, db.Page{Limit: 2, Backward: true, Before: 11}, []int64{21, 20}},
		{"a ticker only in the dropped month", db.FirehoseFilter{SearchFilter: db.SearchFilter{Coins: []string{"AUGC"}}}, db.Page{Limit: 10}, []int64{}},
		{"a ticker in both months", db.FirehoseFilter{SearchFilter: db.SearchFilter{Coins: []string{"BOTH"}}}, db.Page{Limit: 10}, []int64{21}},
	} {
		if got := pageIDs(t, s, c.f, c.p); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	var sideIDs, sideCoins int
	err = bdb.NewRaw(`SELECT (SELECT count(*) FROM firehose_message_ids WHERE id < 20),
		(SELECT count(*) FROM firehose_coins WHERE id < 20)`).Scan(ctx, &sideIDs, &sideCoins)
	if err != nil {
		t.Fatal(err)
	}
	if sideIDs != 0 || sideCoins != 0 {
		t.Errorf("side rows of the dropped month left: %d ids, %d coins", sideIDs, sideCoins)
	}
	// The ids of the dropped month are free again.
	addMessages(t, bdb, map[int64]time.Time{10: sep(2, 0)}, nil)
}

func TestParseRetention(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want db.Retention
	}{
		{"", db.Retention{}}, {"0", db.Retention{}}, {"2y", db.Retention{Months: 24}}, {"18mo", db.Retention{Months: 18}},
		{"12w", db.Retention{Span: 12 * 7 * 24 * time.Hour}}, {"90d", db.Retention{Span: 90 * 24 * time.Hour}},
		{"2160h", db.Retention{Span: 2160 * time.Hour}},
	} {
		got, err := db.ParseRetention(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRetention(%q) = %+v, %v; want %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"1x", "-5h", "mo", "3 months"} {
		if _, err := db.ParseRetention(bad); err == nil {
			t.Errorf("ParseRetention(%q): no error", bad)
		}
	}
	cut := db.Retention{Months: 1}.Cutoff(time.Date(2026, 3, 31, 12, 0, 0, 0, time.UTC))
	if !cut.Equal(time.Date(2026, 3, 3, 12, 0, 0, 0, time.UTC)) {
		t.Errorf("a month before March 31: %s", cut)
	}
}

// KeptSince is the start of the month DropFirehoseBefore keeps first: the
// month holding the cutoff, or the month that begins at it
// (TestFirehoseRetentionEdges drops August for a cutoff on September 1).
func TestRetentionKeptSince(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	sep1 := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		r    db.Retention
		want time.Time
	}{
		{db.Retention{}, time.Time{}},
		{db.Retention{Span: now.Sub(sep1)}, sep1},                          // the cutoff on September 1
		{db.Retention{Span: now.Sub(sep1.Add(19 * 24 * time.Hour))}, sep1}, // inside September
		{db.Retention{Span: now.Sub(sep1.Add(-time.Nanosecond))}, time.Date(2026, 8, 1, 0, 0, 0, 0, time.UTC)},
		{db.Retention{Months: 18}, time.Date(2025, 5, 1, 0, 0, 0, 0, time.UTC)},
	} {
		if got := c.r.KeptSince(now); !got.Equal(c.want) {
			t.Errorf("%s: KeptSince = %s, want %s", c.r, got, c.want)
		}
	}
}

// TestMigrateMovesExistingFirehose migrates a seeded database of the layout
// before partitions while readers and a writer keep working, then compares
// every row, side row and id with what it held.
func TestMigrateMovesExistingFirehose(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewEmpty(t)
	if err := db.MigrateBefore(ctx, url, "20261126300001"); err != nil {
		t.Fatal(err)
	}
	bdb, err := db.Open(url, db.Options{NoStatementLimit: true})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if _, err := seed.Run(ctx, bdb, seed.Options{Firehose: 60_000, FirehoseDays: 120}, io.Discard); err != nil {
		t.Fatal(err)
	}
	_, err = bdb.ExecContext(ctx, `CREATE TABLE before_rows AS SELECT * FROM firehose_messages;
		CREATE TABLE before_coins AS SELECT * FROM firehose_coins`)
	if err != nil {
		t.Fatal(err)
	}

	// Readers and a writer of the API's kind, all along.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var reads, readErrs, written atomic.Int64
	var firstErr atomic.Value
	s := db.NewStore(bdb)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, _, err := s.ListFirehose(ctx, db.FirehoseFilter{Pane: db.PaneNews}, db.Page{Limit: 20}); err != nil {
					readErrs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
				}
				reads.Add(1)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := int64(1); ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			_, err := bdb.ExecContext(ctx, `INSERT INTO firehose_messages (id, pane, source, title, created_at) VALUES (?, 'news', 'live', 'during the move', now())`, 900_000_000+i)
			if err != nil {
				readErrs.Add(1)
				firstErr.CompareAndSwap(nil, err.Error())
				return
			}
			written.Add(1)
			time.Sleep(time.Millisecond)
		}
	}()
	start := time.Now()
	migErr := db.Migrate(ctx, url, io.Discard)
	close(stop)
	wg.Wait()
	if migErr != nil {
		t.Fatal(migErr)
	}
	t.Logf("moved in %s; %d reads, %d writes meanwhile", time.Since(start), reads.Load(), written.Load())
	if readErrs.Load() > 0 {
		t.Errorf("%d reads or writes failed during the move, first: %v", readErrs.Load(), firstErr.Load())
	}

	// The columns the rows had before the move: later migrations may add
	// columns of their own.
	var cols string
	if err := bdb.NewRaw(`SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
		WHERE attrelid = 'before_rows'::regclass AND attnum > 0 AND NOT attisdropped`).Scan(ctx, &cols); err != nil {
		t.Fatal(err)
	}
	var kind string
	var missing, extra, liveRows, coinsMissing, coinsExtra, ids, total, inDefault int
	err = bdb.NewRaw(`SELECT (SELECT relkind::text FROM pg_class WHERE oid = 'firehose_messages'::regclass),
		(SELECT count(*) FROM (SELECT `+cols+` FROM before_rows EXCEPT ALL SELECT `+cols+` FROM firehose_messages WHERE source <> 'live') x),
		(SELECT count(*) FROM (SELECT `+cols+` FROM firehose_messages WHERE source <> 'live' EXCEPT ALL SELECT `+cols+` FROM before_rows) x),
		(SELECT count(*) FROM firehose_messages WHERE source = 'live'),
		(SELECT count(*) FROM (SELECT * FROM before_coins EXCEPT SELECT * FROM firehose_coins) x),
		(SELECT count(*) FROM (SELECT * FROM firehose_coins EXCEPT SELECT * FROM before_coins) x),
		(SELECT count(*) FROM firehose_message_ids i JOIN firehose_messages m USING (id, created_at)),
		(SELECT count(*) FROM firehose_messages),
		(SELECT count(*) FROM firehose_messages_default)`).
		Scan(ctx, &kind, &missing, &extra, &liveRows, &coinsMissing, &coinsExtra, &ids, &total, &inDefault)
	if err != nil {
		t.Fatal(err)
	}
	if kind != "p" {
		t.Errorf("firehose_messages has relkind %q, want p (partitioned)", kind)
	}
	if missing != 0 || extra != 0 {
		t.Errorf("after the move %d rows are missing and %d differ or are extra", missing, extra)
	}
	if int64(liveRows) != written.Load() {
		t.Errorf("%d of the %d rows written during the move are there", liveRows, written.Load())
	}
	if coinsMissing != 0 || coinsExtra != 0 {
		t.Errorf("coin side rows: %d missing, %d extra", coinsMissing, coinsExtra)
	}
	if ids != total || inDefault != 0 {
		t.Errorf("%d of %d messages have their id registered; %d in the default partition", ids, total, inDefault)
	}
	// The triggers came along: an insert still reaches every side table.
	addMessages(t, bdb, map[int64]time.Time{950_000_000: time.Now()}, map[int64]string{950_000_000: "MOVEDC"})
	var side int
	if err := bdb.NewRaw(`SELECT (SELECT count(*) FROM firehose_coins WHERE ticker = 'MOVEDC') + (SELECT count(*) FROM coin_tickers WHERE ticker = 'MOVEDC')
		+ (SELECT count(*) FROM firehose_message_ids WHERE id = 950000000) + (SELECT count(*) FROM firehose_messages WHERE id = 950000000 AND fts IS NOT NULL AND stream_pos > 9007199254740992)`).Scan(ctx, &side); err != nil {
		t.Fatal(err)
	}
	if side != 4 {
		t.Errorf("an insert after the move reached %d of 4 derived places", side)
	}
}
