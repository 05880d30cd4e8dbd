package db_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"
)

// TestReceivedAtIsWhenWritten pins what the documents say of received_at:
// the database's clock when the row was written, inside the transaction
// that stores it, so before that transaction commits (not the commit
// time), and kept by an update.
func TestReceivedAtIsWhenWritten(t *testing.T) {
	t.Parallel()
	bdb := emptyFirehose(t)
	ctx := context.Background()
	var txStart, written, committed time.Time
	err := bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := tx.NewRaw("SELECT now()").Scan(ctx, &txStart); err != nil {
			return err
		}
		if err := tx.NewRaw("SELECT pg_sleep(0.1), clock_timestamp()").Scan(ctx, new(string), &written); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO firehose_messages (id, pane, source, title, created_at)
			VALUES (40000001, 'news', 'src', 'written', now())`)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, "SELECT pg_sleep(0.3)")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := bdb.NewRaw("SELECT clock_timestamp()").Scan(ctx, &committed); err != nil {
		t.Fatal(err)
	}
	read := func() time.Time {
		t.Helper()
		var at time.Time
		if err := bdb.NewRaw("SELECT received_at FROM firehose_messages WHERE id = 40000001").Scan(ctx, &at); err != nil {
			t.Fatal(err)
		}
		return at
	}
	at := read()
	if at.Before(written) || !at.Before(committed.Add(-250*time.Millisecond)) {
		t.Errorf("received_at %s: want the insert's time, after %s (the transaction's start %s) and well before the commit (%s)",
			at, written, txStart, committed)
	}
	if _, err := bdb.ExecContext(ctx, "UPDATE firehose_messages SET title = 'edited' WHERE id = 40000001"); err != nil {
		t.Fatal(err)
	}
	if again := read(); !again.Equal(at) {
		t.Errorf("an update moved received_at from %s to %s", at, again)
	}
}
