package importer

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
)

// Two batches' statements run at once unless one could wait for a lock the
// other holds until its commit (see canOverlap). Besides the items' own
// rows, the triggers on posts and firehose_messages insert rows into tables
// that every batch may write:
//
//   - coin_tickers, one row per ticker (coin_tickers_add);
//   - firehose_source_groups, one row per (source, pane, important)
//     (firehose_source_groups_add);
//   - post_coins and firehose_coins, one row per (ticker, item id)
//     (coin_side_insert): keyed by the item, so covered by its id;
//   - firehose_message_ids, one row per message id (the ids registry of
//     the partitioned firehose): keyed by the item too;
//   - firehose_id_blocks, one row per block of 65,536 ids and month of
//     created_at (firehose_id_blocks_add): consecutive batches share one.
//
// A shared key names such a row. Once the row is committed, writers only
// read it (ON CONFLICT DO NOTHING takes no lock on a committed row); a row
// that a running transaction has inserted makes every other writer of the
// same key wait for that transaction's end. TestSharedRowTriggers fails
// when the triggers change, so that this list is looked at again.
//
// The importer reads the committed keys when it starts. Only TRUNCATE
// removes such rows (seed --reset): an import running across a reset may
// take a key for committed that is not, and two of its batches may then
// wait for each other until the statement timeout fails the import (the
// batches before are written, as for any failed batch).

// keySet is a set of shared keys.
type keySet map[string]struct{}

func tickerKey(t string) string { return "ticker " + t }

func groupKey(source string, pane db.Pane, important bool) string {
	return "group " + strconv.Quote(source) + " " + string(pane) + " " + strconv.FormatBool(important)
}

func postSharedKeys(p *db.Post, add func(string)) {
	for _, t := range p.Coins {
		add(tickerKey(t))
	}
}

func firehoseSharedKeys(m *db.FirehoseMessage, add func(string)) {
	for _, t := range m.Coins {
		add(tickerKey(t))
	}
	add(groupKey(m.Source, m.Pane, m.Important))
	add(blockKey(db.FirehoseIDBlock(m.ID), m.CreatedAt))
}

// blockKey names the row of firehose_id_blocks of an id block and the
// month (UTC) of a time in it.
func blockKey(block int64, t time.Time) string {
	t = t.UTC()
	return "block " + strconv.FormatInt(block, 10) + " " + t.Format("2006-01")
}

// registeredTickers returns the keys of the tickers the database holds.
func registeredTickers(ctx context.Context, idb bun.IDB, into keySet) error {
	var tickers []string
	if err := idb.NewRaw(`SELECT ticker FROM coin_tickers`).Scan(ctx, &tickers); err != nil {
		return fmt.Errorf("read registered tickers: %w", err)
	}
	for _, t := range tickers {
		into[tickerKey(t)] = struct{}{}
	}
	return nil
}

func registeredPostKeys(ctx context.Context, idb bun.IDB) (keySet, error) {
	keys := keySet{}
	return keys, registeredTickers(ctx, idb, keys)
}

func registeredFirehoseKeys(ctx context.Context, idb bun.IDB) (keySet, error) {
	keys := keySet{}
	if err := registeredTickers(ctx, idb, keys); err != nil {
		return nil, err
	}
	var groups []struct {
		Source    string  `bun:"source"`
		Pane      db.Pane `bun:"pane"`
		Important bool    `bun:"important"`
	}
	if err := idb.NewRaw(`SELECT source, pane, important FROM firehose_source_groups`).Scan(ctx, &groups); err != nil {
		return nil, fmt.Errorf("read registered source groups: %w", err)
	}
	for _, g := range groups {
		keys[groupKey(g.Source, g.Pane, g.Important)] = struct{}{}
	}
	var blocks []struct {
		Block int64     `bun:"block"`
		Month time.Time `bun:"month"`
	}
	if err := idb.NewRaw(`SELECT block, month FROM firehose_id_blocks`).Scan(ctx, &blocks); err != nil {
		return nil, fmt.Errorf("read registered id blocks: %w", err)
	}
	for _, b := range blocks {
		keys[blockKey(b.Block, b.Month)] = struct{}{}
	}
	return keys, nil
}
