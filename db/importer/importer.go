// Package importer loads NDJSON files into feedapi's tables; it is the
// operator command `feedapi import KIND [FILE|-]` with KIND one of posts,
// briefs, firehose, etf-flows, etf-funds and etf-fund-flows.
//
// Each line is one JSON object with the REST field names of its resource
// (posts also take raw, briefs content, the firehose summary_ai); uid is
// derived from the id and ignored. A line is validated completely before any
// of it is written: a bad line is reported as "line N: field: problem" and
// skipped, the others are upserted by primary key in batches, one transaction
// per batch. Importing the same file again changes nothing, and a row that
// would not change is not rewritten.
package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"

	"github.com/feedapi/feedapi/db"
)

const (
	defaultBatchSize = 1000
	maxLineBytes     = 1 << 20  // longer lines are rejected, not read into memory
	maxBatchBytes    = 32 << 20 // a batch is written early when its lines reach this size
)

// Options tunes an import. The zero value is usable.
type Options struct {
	// BatchSize is the number of rows per INSERT statement, each batch in its
	// own transaction (default 1000).
	BatchSize int
	// Progress, when not nil, is called with the counts so far each time a
	// batch has been written (every BatchSize lines or so), from the
	// goroutine that called Import; the caller paces what it shows.
	Progress func(Result)
	// Rejects, when not nil, receives "line N: field: problem" for each
	// rejected line, in line order.
	Rejects io.Writer
	// Follow reads r as a stream that grows while it is read (a pipe from
	// a scraper): each line is written as soon as no further complete
	// line is waiting to be read (or the batch is full, or its first line
	// has waited maxLinger), so that it is committed within milliseconds
	// of its arrival. Import then returns at the end of r, or when ctx is
	// cancelled, after writing what it has read (see follow).
	Follow bool
	// MaxTickerLen bounds each ticker of an explicit coins array, in bytes.
	// The bound is the API's coins filter (graph/limits.TickerMaxLen, which
	// cmd/feedapi passes), so that every ticker stored can be asked for;
	// zero bounds a ticker by its form alone.
	MaxTickerLen int
	// FirehoseRetention, when set, rejects a firehose line whose created_at
	// lies in a month the retention no longer keeps: written, it would
	// bring the month back (and move firehose_oldest) until the next
	// retention run dropped it again.
	FirehoseRetention db.Retention
	// StoryWindow bounds how many indexed items the import keeps in memory
	// to find its items' stories (db.StoryAssigner.MaxWindow: 0 is
	// db.DefaultMaxWindow, below 0 none, every batch probing the
	// database's index instead).
	StoryWindow int

	// noStories leaves the story of new rows unset (story_id null), as
	// rows written before stories existed: the throughput benchmark's
	// baseline.
	noStories bool
}

// Result counts the lines of an import; blank lines are not counted. When
// Import returns no error, Read = Imported + Rejected. A line replaced by a
// later line with the same key counts as imported.
type Result struct {
	Read, Imported, Rejected int
}

// ErrRejected is returned by Result.Err when lines were rejected.
var ErrRejected = errors.New("lines rejected")

// Err returns an error wrapping ErrRejected when some lines were rejected, so
// that the import command can fail after a partial import.
func (r Result) Err() error {
	if r.Rejected > 0 {
		return fmt.Errorf("%d of %d lines: %w", r.Rejected, r.Read, ErrRejected)
	}
	return nil
}

// Import reads NDJSON lines of the given kind from r (a file, or os.Stdin for
// "-") and upserts the valid ones into bdb. Rejected lines are reported to opts.Rejects and counted in
// the Result; the error is for reading r or writing to the database, and a
// batch that fails is rolled back entirely. Lines after the last written
// batch are not written when an error is returned.
func Import(ctx context.Context, bdb *bun.DB, kind Kind, r io.Reader, opts Options) (Result, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = defaultBatchSize
	}
	if opts.Rejects == nil {
		opts.Rejects = io.Discard
	}
	switch kind {
	case KindPosts:
		return run(ctx, bdb, r, opts, resource[db.Post, int64]{
			kind:       kind,
			parse:      parsePost,
			key:        func(p *db.Post) int64 { return p.ID },
			sharedKeys: postSharedKeys,
			registered: registeredPostKeys,
			story:      postStory,
		})
	case KindBriefs:
		return run(ctx, bdb, r, opts, resource[db.Brief, int64]{
			kind:      kind,
			parse:     parseBrief,
			key:       func(b *db.Brief) int64 { return b.ID },
			conflicts: weekConflicts,
		})
	case KindFirehose:
		return run(ctx, bdb, r, opts, resource[db.FirehoseMessage, int64]{
			kind:       kind,
			parse:      parseFirehose,
			key:        func(m *db.FirehoseMessage) int64 { return m.ID },
			sharedKeys: firehoseSharedKeys,
			registered: registeredFirehoseKeys,
			story:      firehoseStory,
			conflict:   firehoseConflict,
			prepare:    newFirehoseMonths().ensure,
			prepareTx:  firehoseRetime,
		})
	case KindEtfFlows:
		return run(ctx, bdb, r, opts, resource[db.EtfFlow, etfKey]{
			kind:  kind,
			parse: parseEtfFlow,
			key:   func(f *db.EtfFlow) etfKey { return etfKey{f.Asset, f.FlowDate} },
		})
	case KindEtfFunds:
		return run(ctx, bdb, r, opts, resource[db.EtfFund, string]{
			kind:      kind,
			parse:     parseEtfFund,
			key:       func(f *db.EtfFund) string { return f.Ticker },
			conflicts: fundAssetConflicts,
		})
	case KindEtfFundFlows:
		return run(ctx, bdb, r, opts, resource[db.EtfFundFlow, fundKey]{
			kind:      kind,
			parse:     parseEtfFundFlow,
			key:       func(f *db.EtfFundFlow) fundKey { return fundKey{f.Ticker, f.FlowDate} },
			conflicts: fundFlowConflicts,
		})
	}
	_, err := ParseKind(string(kind))
	return Result{}, err
}

// importer is the state of one import: the counts, the batch being filled
// and the rejects not yet reported.
type importer[T any, K comparable] struct {
	res  resource[T, K]
	bdb  *bun.DB
	opts Options

	result Result

	rows     []T
	lines    []int     // line number of each row
	index    map[K]int // position of each key in rows
	accepted int       // lines accepted since the last flush, replaced ones included
	size     int       // bytes of those lines
	rejects  []reject  // lines rejected since the last flush

	registered keySet // shared keys committed, as far as this import knows

	stories db.StoryAssigner // assigns the rows of posts and firehose messages to stories
}

// reject is a rejected line and why.
type reject struct {
	line int
	err  error
}

func run[T any, K comparable](ctx context.Context, bdb *bun.DB, r io.Reader, opts Options, res resource[T, K]) (Result, error) {
	im := &importer[T, K]{res: res, bdb: bdb, opts: opts, index: map[K]int{}}
	im.stories.MaxWindow = opts.StoryWindow
	read := im.readAll
	if opts.Follow {
		read = im.follow
	}
	if err := read(ctx, r); err != nil {
		return im.result, fmt.Errorf("import %s: %w", res.kind, err)
	}
	return im.result, nil
}

// readAll imports r, writing each batch while the next lines are read and
// validated. Two batches' statements run at once, on two connections,
// unless the later one could take a lock that the earlier one's statement
// needs (canOverlap): the full-text and coins triggers make the database
// the import's bottleneck, and a statement uses one core. Batches still
// commit in line order, a batch only after the one before it, so an error
// leaves exactly the lines before the failed batch written, as a
// sequential import would.
func (im *importer[T, K]) readAll(ctx context.Context, r io.Reader) error {
	if im.res.registered != nil {
		known, err := im.res.registered(ctx, im.bdb)
		if err != nil {
			return err
		}
		im.registered = known
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var buf []byte
	var prev *batch[T, K] // the batch written, not yet settled
	// next starts the batch read so far beside prev, then settles prev.
	next := func() error {
		b := im.takeBatch()
		if prev != nil && im.res.conflicts != nil {
			// The database check of b reads what prev writes.
			if err := im.settle(prev); err != nil {
				return err
			}
			prev = nil
		}
		im.start(ctx, b, prev, prev != nil && !im.canOverlap(prev, b))
		if prev != nil {
			if err := im.settle(prev); err != nil {
				<-b.done // rolled back: it commits only after prev
				return err
			}
		}
		prev = b
		return nil
	}
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br, buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			if prev != nil {
				_ = im.settle(prev)
			}
			return fmt.Errorf("read line %d: %w", n, err)
		}
		buf = line[:0]
		im.take(n, line, tooLong)
		if im.full() {
			if err := next(); err != nil {
				return err
			}
		}
	}
	if err := next(); err != nil {
		return err
	}
	return im.settle(prev)
}

// take validates line n (read by readLine) into the batch, or rejects it;
// a blank line is skipped.
func (im *importer[T, K]) take(n int, line []byte, tooLong bool) {
	if n == 1 {
		line = bytes.TrimPrefix(line, []byte("\uFEFF")) // byte order mark
	}
	switch {
	case tooLong:
		im.result.Read++
		im.reject(n, &fieldError{"json", fmt.Sprintf("line longer than %d bytes", maxLineBytes)})
	case len(bytes.TrimSpace(line)) == 0:
	default:
		im.result.Read++
		im.add(n, line)
	}
}

// full reports whether the batch must be written before the next line.
func (im *importer[T, K]) full() bool {
	return len(im.rows) >= im.opts.BatchSize || len(im.rejects) >= im.opts.BatchSize || im.size >= maxBatchBytes
}

// readLine returns the next line without its line ending, reusing buf.
// A line longer than maxLineBytes is consumed but not kept: tooLong is set.
// At the end of the input it returns io.EOF.
func readLine(br *bufio.Reader, buf []byte) (line []byte, tooLong bool, err error) {
	line = buf[:0]
	read := 0
	for {
		chunk, err := br.ReadSlice('\n')
		read += len(chunk)
		if !tooLong && len(line)+len(chunk) <= maxLineBytes+len("\r\n") {
			line = append(line, chunk...)
		} else {
			tooLong = true
		}
		if err == nil || (err == io.EOF && read > 0) {
			break
		}
		if !errors.Is(err, bufio.ErrBufferFull) {
			return nil, false, err
		}
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return line, tooLong || len(line) > maxLineBytes, nil
}

// add validates one line and adds its row to the batch; within a batch the
// last line with a key replaces earlier ones.
func (im *importer[T, K]) add(n int, line []byte) {
	o, ferr := decodeObject(line)
	if ferr != nil {
		im.reject(n, ferr)
		return
	}
	o.maxTicker = im.opts.MaxTickerLen
	o.keptSince = im.opts.FirehoseRetention.KeptSince(time.Now())
	row, err := im.res.parse(o)
	if err != nil {
		im.reject(n, err)
		return
	}
	if i, dup := im.index[im.res.key(&row)]; dup {
		im.rows[i], im.lines[i] = row, n
	} else {
		im.index[im.res.key(&row)] = len(im.rows)
		im.rows = append(im.rows, row)
		im.lines = append(im.lines, n)
	}
	im.accepted++
	im.size += len(line)
}

func (im *importer[T, K]) reject(n int, err error) {
	im.result.Rejected++
	im.rejects = append(im.rejects, reject{n, err})
}

// batch is the lines of one transaction: the rows to write, the line of
// each, the lines rejected among them, and, once written, the outcome.
type batch[T any, K comparable] struct {
	rows       []T
	lines      []int
	keys       map[K]int     // the rows' primary keys
	shared     keySet        // the rows' shared keys
	accepted   int           // lines accepted, replaced ones included
	rejects    []reject      // lines rejected while reading
	late       []reject      // rows the database check refused (set by write)
	stories    *db.StoryPlan // the stories its rows join or start
	assigned   chan struct{} // closed once its rows have their stories (or that failed)
	unassigned bool          // that failed (read once assigned is closed)
	storied    chan struct{} // closed once its stories are written (or that failed)
	written    chan struct{} // closed once its statements have run (or failed)
	done       chan struct{}
	err        error
}

// errEarlierBatch rolls back a batch whose predecessor failed.
var errEarlierBatch = errors.New("an earlier batch failed")

// takeBatch moves the lines read since the last batch into a batch of
// their own.
func (im *importer[T, K]) takeBatch() *batch[T, K] {
	b := &batch[T, K]{rows: im.rows, lines: im.lines, keys: im.index, accepted: im.accepted, rejects: im.rejects}
	im.rows, im.lines, im.index, im.accepted, im.size, im.rejects = nil, nil, map[K]int{}, 0, 0, nil
	if im.registered != nil && im.res.sharedKeys != nil { // tracked by readAll only
		b.shared = keySet{}
		add := func(k string) { b.shared[k] = struct{}{} }
		for i := range b.rows {
			im.res.sharedKeys(&b.rows[i], add)
		}
	}
	return b
}

// canOverlap reports whether b's statement may run while prev's statement
// runs. b commits only after prev, so prev must never wait for a lock b
// holds: b must not write a row prev writes (a primary key of both), nor
// insert a shared row prev writes too (a shared key of both that is not
// known to be committed). Otherwise b's statement starts once prev's has
// run, and any wait points from b to prev.
func (im *importer[T, K]) canOverlap(prev, b *batch[T, K]) bool {
	small, large := prev.keys, b.keys
	if len(small) > len(large) {
		small, large = large, small
	}
	for k := range small {
		if _, ok := large[k]; ok {
			return false
		}
	}
	for k := range b.shared {
		if _, committed := im.registered[k]; committed {
			continue
		}
		if _, ok := prev.shared[k]; ok {
			return false
		}
	}
	// The stories both write are not a reason: b writes its stories only
	// once prev has written its own (write).
	return true
}

// assignStories sets the story of each row of b (posts and firehose
// messages) once the batch before it (after) has its stories: batches are
// assigned one after the other in the order the lines were read, and the
// assigner knows the stories of the batches before b even while they are
// being written. It runs on b's goroutine, while the next lines are read.
// The stories are written with b's rows (write).
func (im *importer[T, K]) assignStories(ctx context.Context, b, after *batch[T, K]) (err error) {
	defer func() {
		b.unassigned = err != nil
		close(b.assigned)
	}()
	var items []db.StoryItem
	if im.res.story != nil && !im.opts.noStories {
		// Prepared while the batch before is assigned.
		items = make([]db.StoryItem, len(b.rows))
		for i := range b.rows {
			items[i] = im.res.story(&b.rows[i])
			items[i].Prepare()
		}
	}
	if after != nil {
		select {
		case <-after.assigned:
		case <-ctx.Done():
			return ctx.Err()
		}
		if after.unassigned {
			// The assigner's memory of the batches before b is incomplete.
			return errEarlierBatch
		}
	}
	if len(items) == 0 {
		return nil
	}
	plan, err := im.stories.Assign(ctx, db.SQLQuerier{DB: im.bdb.DB}, items)
	if err != nil {
		return fmt.Errorf("import %s: %w", im.res.kind, err)
	}
	b.stories = plan
	return nil
}

// start writes b in its own transaction on a goroutine of its own; with
// after set, b commits only once after has committed, and rolls back if
// after failed; with afterWritten also set, b's statement starts only once
// after's has run.
func (im *importer[T, K]) start(ctx context.Context, b, after *batch[T, K], afterWritten bool) {
	b.done, b.written = make(chan struct{}), make(chan struct{})
	b.assigned, b.storied = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(b.done)
		b.err = im.assignStories(ctx, b, after)
		if b.err == nil {
			b.err = im.write(ctx, b, after, afterWritten)
		} else {
			close(b.storied)
			close(b.written)
		}
	}()
}

// flush writes the batch read so far and settles it, before reading on
// (import --follow: each line committed before the next is awaited).
func (im *importer[T, K]) flush(ctx context.Context) error {
	b := im.takeBatch()
	im.start(ctx, b, nil, false)
	return im.settle(b)
}

// write upserts b's rows in one transaction, committed after after's.
func (im *importer[T, K]) write(ctx context.Context, b, after *batch[T, K], afterWritten bool) error {
	var once, storiedOnce sync.Once
	wrote := func() { once.Do(func() { close(b.written) }) }
	defer wrote()
	storied := func() { storiedOnce.Do(func() { close(b.storied) }) }
	defer storied()
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(b.rows) == 0 {
		return waitFor(ctx, after)
	}
	if afterWritten {
		select {
		case <-after.written:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if im.res.prepare != nil {
		if err := im.res.prepare(ctx, im.bdb, b.rows); err != nil {
			return err
		}
	}
	return im.bdb.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		rows := b.rows
		if im.res.conflicts != nil {
			bad, err := im.res.conflicts(ctx, tx, rows)
			if err != nil {
				return err
			}
			rows = make([]T, 0, len(b.rows))
			for i, row := range b.rows {
				if e, ok := bad[i]; ok {
					b.late = append(b.late, reject{b.lines[i], e})
				} else {
					rows = append(rows, row)
				}
			}
		}
		var err error
		if im.res.prepareTx != nil {
			err = im.res.prepareTx(ctx, tx, rows)
		}
		if err == nil {
			err = upsert(ctx, tx, rows, im.res.conflict)
		}
		if err == nil {
			err = b.stories.WriteIndex(ctx, db.SQLQuerier{DB: tx.Tx})
		}
		if err == nil && after != nil && b.stories != nil {
			// A story both batches write: its row is locked by after
			// until after commits, and after must never wait for b.
			select {
			case <-after.storied:
			case <-ctx.Done():
				err = ctx.Err()
			}
		}
		if err == nil {
			err = b.stories.WriteStories(ctx, db.SQLQuerier{DB: tx.Tx})
		}
		storied()
		wrote()
		if err != nil {
			return err
		}
		return waitFor(ctx, after)
	})
}

// waitFor waits for b (if any) to be written and reports whether it failed.
func waitFor[T any, K comparable](ctx context.Context, b *batch[T, K]) error {
	if b == nil {
		return nil
	}
	select {
	case <-b.done:
		if b.err != nil {
			return errEarlierBatch
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// settle waits for b to be written, then counts it and reports the
// rejects of its lines in line order, and the progress.
func (im *importer[T, K]) settle(b *batch[T, K]) error {
	<-b.done
	if b.err != nil {
		_ = im.writeRejects(b.rejects)
		if len(b.lines) == 0 {
			return b.err
		}
		return fmt.Errorf("write lines %d to %d: %w", slices.Min(b.lines), slices.Max(b.lines), b.err)
	}
	for k := range b.shared {
		im.registered[k] = struct{}{}
	}
	im.result.Imported += b.accepted - len(b.late)
	im.result.Rejected += len(b.late)
	if err := im.writeRejects(append(b.rejects, b.late...)); err != nil {
		return err
	}
	if im.opts.Progress != nil {
		im.opts.Progress(im.result)
	}
	return nil
}

func (im *importer[T, K]) writeRejects(rejects []reject) error {
	sort.SliceStable(rejects, func(i, j int) bool { return rejects[i].line < rejects[j].line })
	for _, r := range rejects {
		if _, err := fmt.Fprintf(im.opts.Rejects, "line %d: %v\n", r.line, r.err); err != nil {
			return fmt.Errorf("report rejected line: %w", err)
		}
	}
	return nil
}

// upsert inserts rows, or updates the rows with the same primary key (or
// conflict target, when not empty), in one statement. A row equal to the
// stored one is left alone, so that importing the same data again writes no
// new row versions. The statement returns nothing: bun would otherwise
// read back the columns it wrote as DEFAULT, and a statement that returns
// rows is prepared, and kept prepared on its connection, by the driver's
// statement cache, which for a statement of a whole batch's values is
// megabytes of the server's memory per batch.
func upsert[T any](ctx context.Context, tx bun.Tx, rows []T, conflict string) error {
	if len(rows) == 0 {
		return nil
	}
	table := tx.Dialect().Tables().Get(reflect.TypeFor[T]())
	if conflict == "" {
		conflict = columns(table.PKs, "")
	}
	_, err := tx.NewInsert().Model(&rows).
		On("CONFLICT (" + conflict + ") DO UPDATE").
		Where("(" + columns(table.DataFields, string(table.SQLAlias)+".") + ") IS DISTINCT FROM (" +
			columns(table.DataFields, "EXCLUDED.") + ")").
		Returning("NULL").
		Exec(ctx)
	if err != nil {
		return fmt.Errorf("upsert into %s: %w", table.Name, err)
	}
	return nil
}

// columns lists the fields' quoted column names, each after prefix.
func columns(fields []*schema.Field, prefix string) string {
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = prefix + string(f.SQLName)
	}
	return strings.Join(names, ", ")
}
