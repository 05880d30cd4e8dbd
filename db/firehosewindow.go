package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// A page of the firehose is read in id order, and the firehose is
// partitioned by created_at: left alone, the planner merges one index scan
// per month (and the coins filter probes every month for each side row).
// Ids mostly grow with created_at, so a page's rows lie in one or two
// months. firehose_id_blocks (migration 20261126400001, kept by triggers)
// tells which months hold ids of each block of blockIDs ids, late messages
// included. A page is first read from the months of the blocks its order
// meets first, through created_at ranges with which the planner prunes the
// other partitions; the last row read then shows whether a month left out
// holds ids between it and the page's start, and only then is the page
// read again over those months too. The answer is exact whatever the order
// of ids and times.
//
// The triggers are the parent table's: a writer into a partition itself
// (not through firehose_messages) must add its blocks, or its rows go
// unread by pages.
//
// The blocks are read in a statement of their own, just before the page: a
// late message committed between the two may be missed by this one page,
// as if it had come a moment later.

// blockShift is log2 of the ids per block of firehose_id_blocks, as its
// triggers compute a block (id >> 16, migration 20261126400001).
const blockShift = 16

// FirehoseIDBlock is the block of firehose_id_blocks that holds id.
func FirehoseIDBlock(id int64) int64 { return id >> blockShift }

// blocksRead is how many (block, month) rows a page reads at most, from its
// keyset bound on in its order: ids beyond them are in months unknown to
// it, and a page that reaches them reads every month.
const blocksRead = 256

// idBlock is a row of firehose_id_blocks: month holds ids of block.
type idBlock struct {
	Block int64     `bun:"block"`
	Month time.Time `bun:"month"`
}

// timeWindow is a set of months of created_at; nil reads every month.
type timeWindow []time.Time

// write writes the window's created_at ranges on alias (consecutive months
// as one range), as literals, so that the planner prunes the partitions
// outside it.
func (w timeWindow) write(q *sqlBuilder, alias string) {
	if w == nil {
		return
	}
	q.add(" AND (")
	for i := 0; i < len(w); {
		j := i + 1
		for j < len(w) && w[j].Equal(w[j-1].AddDate(0, 1, 0)) {
			j++
		}
		if i > 0 {
			q.add(" OR ")
		}
		q.add("("+alias+".created_at >= ? AND "+alias+".created_at < ?)", w[i], w[j-1].AddDate(0, 1, 0))
		i = j
	}
	q.add(")")
}

// with returns the window with the months of more added, sorted.
func (w timeWindow) with(more []time.Time) timeWindow {
	out := slices.Clone(w)
	for _, m := range more {
		if !slices.ContainsFunc(out, m.Equal) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b time.Time) int { return a.Compare(b) })
	return out
}

// covers reports whether every month of ms is in w.
func (w timeWindow) covers(ms []time.Time) bool {
	for _, m := range ms {
		if !slices.ContainsFunc(w, m.Equal) {
			return false
		}
	}
	return true
}

// monthWindows chooses the windows of one page from the blocks of its id
// range, in the page's order.
type monthWindows struct {
	blocks   []idBlock // in the page's order of blocks
	complete bool      // blocks holds every block of the page's id range
	desc     bool
}

// firehoseWindows reads the blocks that page p, with ids above sinceID and
// created_at at or after since (zero: no bound), meets first.
func (s *Store) firehoseWindows(ctx context.Context, p Page, sinceID int64, since time.Time) (monthWindows, error) {
	lower := sinceID // ids > lower
	var upper int64  // ids < upper (0: none)
	if p.Backward {
		lower = max(lower, p.Before)
	} else {
		upper = p.After
	}
	var sb strings.Builder
	var args []any
	sb.WriteString("SELECT block, month FROM firehose_id_blocks WHERE true")
	if lower > 0 {
		sb.WriteString(" AND block >= ?")
		args = append(args, FirehoseIDBlock(lower+1))
	}
	if upper > 0 {
		sb.WriteString(" AND block <= ?")
		args = append(args, FirehoseIDBlock(upper-1))
	}
	if !since.IsZero() {
		// The months that end after since.
		sb.WriteString(" AND month > ?")
		args = append(args, clampTime(clampTime(since).AddDate(0, -1, 0)))
	}
	order := "DESC"
	if p.Backward {
		order = "ASC"
	}
	sb.WriteString(" ORDER BY block " + order + ", month LIMIT ?")
	args = append(args, blocksRead)
	w := monthWindows{desc: !p.Backward}
	if err := s.db.NewRaw(sb.String(), args...).Scan(ctx, &w.blocks); err != nil {
		// Before migration 20261126400001 (a database being migrated
		// while the service runs): every month is read.
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == "42P01" {
			return monthWindows{desc: !p.Backward}, nil
		}
		return w, fmt.Errorf("firehose id blocks: %w", err)
	}
	w.complete = len(w.blocks) < blocksRead
	return w, nil
}

// empty reports that no month holds an id of the page's range.
func (w monthWindows) empty() bool { return w.complete && len(w.blocks) == 0 }

// first is the window of the months of the first block in the page's
// order: most pages end in it, or in blocks of the same months. Without
// blocks known, every month.
func (w monthWindows) first() timeWindow {
	var out timeWindow
	for _, b := range w.blocks {
		if b.Block != w.blocks[0].Block {
			break
		}
		out = out.with([]time.Time{b.Month})
	}
	return out
}

// known reports whether the months of block b are all in w.blocks.
func (w monthWindows) known(b int64) bool {
	if w.complete {
		return true
	}
	last := w.blocks[len(w.blocks)-1].Block
	if w.desc {
		return b > last
	}
	return b < last
}

// next checks the page read over window got: full says whether it stopped
// before the window's rows ran out (its limit + 1, or its byte budget),
// last is the id of the last row it read. It returns whether the rows are
// the page's and, if not, the window to read it over.
func (w monthWindows) next(got timeWindow, full bool, last int64) (timeWindow, bool) {
	if got == nil {
		return nil, true
	}
	if !full {
		// The window ran out: the months that hold ids of the page's
		// range are read further, twice as many each time, in the
		// order the page meets them, so that a rare filter costs the
		// months it needs, each planned alone (its own index), not one
		// plan over all of them; once they are all read, the page is.
		var order []time.Time
		for _, b := range w.blocks {
			if !slices.ContainsFunc(order, b.Month.Equal) {
				order = append(order, b.Month)
			}
		}
		if got.covers(order) {
			if w.complete {
				return got, true
			}
			return nil, false
		}
		n := 0
		for _, m := range order {
			if slices.ContainsFunc(got, m.Equal) {
				n++
			}
		}
		grown := got
		for _, m := range order {
			if len(grown) >= 2*n+1 {
				break
			}
			grown = grown.with([]time.Time{m})
		}
		return grown, false
	}
	// The page ends at last: only a month holding ids between the page's
	// start and last could hold one of its rows.
	lb := FirehoseIDBlock(last)
	if !w.known(lb) {
		return nil, false
	}
	var reach []time.Time
	for _, b := range w.blocks {
		if (w.desc && b.Block < lb) || (!w.desc && b.Block > lb) {
			break
		}
		reach = append(reach, b.Month)
	}
	if got.covers(reach) {
		return got, true
	}
	return got.with(reach), false
}
