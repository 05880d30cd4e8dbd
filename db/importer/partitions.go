package importer

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/feedapi/feedapi/db"
)

// firehoseConflict is the firehose upsert's conflict target. The table is
// partitioned by created_at, and a partitioned table's unique keys hold the
// partition key: ids are kept unique across partitions by the
// firehose_message_ids table (one row per id, kept by triggers), and a
// stored message whose created_at changes is moved first (firehoseRetime).
const firehoseConflict = "id, created_at"

// firehoseRetime gives the stored messages of rows the new created_at of
// their row, so that the upsert's conflict target finds them: an id that
// came back with another time is the same message, updated (moved to the
// partition of its new time), never a second row with that id.
func firehoseRetime(ctx context.Context, tx bun.Tx, rows []db.FirehoseMessage) error {
	ids := make([]int64, len(rows))
	times := make([]time.Time, len(rows))
	for i := range rows {
		ids[i], times[i] = rows[i].ID, rows[i].CreatedAt
	}
	_, err := tx.NewRaw(`UPDATE firehose_messages m SET created_at = n.created_at
FROM firehose_message_ids i, unnest(?::bigint[], ?::timestamptz[]) AS n(id, created_at)
WHERE i.id = n.id AND i.created_at <> n.created_at AND m.id = i.id AND m.created_at = i.created_at`,
		pgdialect.Array(ids), pgdialect.Array(times)).Exec(ctx)
	if err != nil {
		return fmt.Errorf("move firehose messages to their new time: %w", err)
	}
	return nil
}

// firehoseMonths remembers the months whose partition an import made sure
// of, so that a batch asks the database only for months it has not seen.
type firehoseMonths struct {
	mu   sync.Mutex
	seen map[time.Time]bool
}

func newFirehoseMonths() *firehoseMonths { return &firehoseMonths{seen: map[time.Time]bool{}} }

// ensure creates the partitions of the rows' months that do not exist yet,
// before the batch's transaction (each in its own short one), so that the
// rows of an import of old messages land in their month's partition and
// not in the default one. It holds the lock while it creates them: a batch
// running beside it that needs the same month waits for the partition
// rather than writing into the default one, where its open transaction
// would block the creation.
func (f *firehoseMonths) ensure(ctx context.Context, bdb *bun.DB, rows []db.FirehoseMessage) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range rows {
		t := rows[i].CreatedAt.UTC()
		m := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		if f.seen[m] {
			continue
		}
		if err := db.CreateFirehosePartition(ctx, bdb, m); err != nil {
			return err
		}
		f.seen[m] = true
	}
	return nil
}
