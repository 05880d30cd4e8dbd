package seed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
)

// streamLive picks the random stream of the live publisher's stories.
const streamLive = 0x6c69766500000000

// liveHorizon is how far ahead of the clock the live publisher simulates
// its market; it simulates a new one when the clock gets close.
const liveHorizon = 30 * day

// LiveOptions configures a Live publisher. Zero values take the defaults.
type LiveOptions struct {
	// Interval is the time between two rounds (default 5s).
	Interval time.Duration
	// Seed drives the stories (default: the clock, so that each start
	// tells new ones). The market they quote is the demo data's (seed 1),
	// so that prices continue where the seeded data ends.
	Seed int64
	// Now is the clock (default time.Now); tests inject their own.
	Now func() time.Time
	// Logger receives a line per failed round (default: none).
	Logger *slog.Logger
}

// Round is what one round of a Live publisher wrote.
type Round struct {
	PostIDs, FirehoseIDs []int64   // new ids, ascending
	At                   time.Time // the clock when the round began
}

// Live publishes new posts and firehose messages every few seconds, written
// by the seed's own generators and write path (writePosts, writeFirehose),
// so that they read like the demo data and get whatever the seed derives
// on write. Timestamps come from the clock, strictly increasing; ids follow
// the largest id in the table, read under a lock that keeps concurrent
// writers (an import) from taking the same id meanwhile, and rows are
// inserted, never upserted, so a live row never replaces another.
type Live struct {
	bdb  *bun.DB
	opts LiveOptions
	r    *rand.Rand

	plan  *plan // the market and newsroom, simulated up to plan.opts.Until
	posts *postGen
	fh    *fhGen
	msgID map[string]int64 // last Telegram message id per curated source
	last  time.Time        // created_at of the newest item written

	stories db.StoryAssigner
}

// NewLive returns a publisher writing into bdb.
func NewLive(bdb *bun.DB, opts LiveOptions) *Live {
	if opts.Interval <= 0 {
		opts.Interval = 5 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Seed == 0 {
		opts.Seed = opts.Now().UnixNano()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Live{bdb: bdb, opts: opts, r: rand.New(rand.NewPCG(uint64(opts.Seed), streamLive))}
}

// Run publishes a round at once and then every Interval until ctx ends, so
// that a demo has items received moments ago from its first request on. A
// round in progress when ctx ends is finished (it takes milliseconds), so
// that shutdown never leaves a half-written round or a broken connection. A
// failed round is logged and the next one tried.
func (l *Live) Run(ctx context.Context) {
	t := time.NewTicker(l.opts.Interval)
	defer t.Stop()
	for {
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		if _, err := l.Publish(wctx); err != nil {
			l.opts.Logger.Warn("live demo data: round failed", slog.Any("error", err))
		}
		cancel()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Publish writes one round now: a curated post most of the time, and one to
// four firehose messages, created between the previous round and the clock.
func (l *Live) Publish(ctx context.Context) (Round, error) {
	now := l.opts.Now().UTC().Truncate(time.Millisecond)
	if !now.After(l.last) { // a clock that went back: keep created_at increasing
		now = l.last.Add(time.Millisecond)
	}
	round := Round{At: now}
	l.prepare(now)
	nPosts := [...]int{0, 1, 1, 1, 2}[l.r.IntN(5)]
	nFh := 1 + l.r.IntN(4)

	conn, err := l.bdb.DB.Conn(ctx)
	if err != nil {
		return round, fmt.Errorf("live: connect: %w", err)
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("live: driver connection is %T, want pgx's stdlib.Conn", dc)
		}
		return pgx.BeginFunc(ctx, sc.Conn(), func(tx pgx.Tx) error {
			// SHARE ROW EXCLUSIVE conflicts with every writer's lock (and its
			// own), not with readers: no other row gets our ids meanwhile.
			if _, err := tx.Exec(ctx, "LOCK TABLE posts, firehose_messages IN SHARE ROW EXCLUSIVE MODE"); err != nil {
				return fmt.Errorf("live: lock: %w", err)
			}
			var maxPost, maxFh int64
			if err := tx.QueryRow(ctx, "SELECT (SELECT coalesce(max(id), 0) FROM posts), (SELECT coalesce(max(id), 0) FROM firehose_messages)").
				Scan(&maxPost, &maxFh); err != nil {
				return fmt.Errorf("live: read ids: %w", err)
			}
			if l.msgID == nil {
				if err := l.readMessageIDs(ctx, tx); err != nil {
					return err
				}
			}
			postTimes := l.times(now, nPosts)
			fhTimes := l.times(now, nFh)
			round.PostIDs = ids(maxPost, nPosts)
			round.FirehoseIDs = ids(maxFh, nFh)
			posts := make([][]any, nPosts)
			for i := range posts {
				l.posts.until = postTimes[i].Add(10 * time.Minute) // views of a post ten minutes old
				l.posts.generateAt(round.PostIDs[i], postTimes[i])
				posts[i] = slices.Clone(l.posts.row)
			}
			msgs := make([][]any, nFh)
			for i := range msgs {
				l.fh.generateAt(round.FirehoseIDs[i], -1, fhTimes[i])
				msgs[i] = slices.Clone(l.fh.row)
			}
			q := db.PgxQuerier{Tx: tx}
			plan, err := l.stories.Assign(ctx, q, append(postItems(posts), firehoseItems(msgs)...))
			if err != nil {
				return fmt.Errorf("live: %w", err)
			}
			if _, err := writePosts(ctx, tx, pgx.CopyFromRows(posts), false); err != nil {
				return err
			}
			if _, err := writeFirehose(ctx, tx, pgx.CopyFromRows(msgs), false); err != nil {
				return err
			}
			if err := plan.Write(ctx, q); err != nil {
				return fmt.Errorf("live: %w", err)
			}
			return nil
		})
	})
	if err != nil {
		// The Telegram message ids were advanced for rows not written; a gap
		// in them is what a deleted post leaves too.
		return Round{At: now}, err
	}
	l.last = now
	return round, nil
}

// prepare simulates the market up to liveHorizon past now when it does not
// reach that far yet, and sets up the generators over it.
func (l *Live) prepare(now time.Time) {
	if l.plan != nil && now.Add(day).Before(l.plan.opts.Until) {
		return
	}
	opts, _ := Options{Until: now.Add(liveHorizon).Truncate(time.Hour), Briefs: 1}.withDefaults()
	l.plan = newPlan(opts)
	noWeeks := newWeekStats(mondayOnOrBefore(now), 0)
	quiet := newProgress(io.Discard, "live", 1)
	l.posts = newPostGen(context.Background(), uint64(l.opts.Seed), l.plan.newsroom, now, opts.Until, 1, noWeeks, quiet)
	l.posts.r = l.r
	l.fh = newFirehoseGen(context.Background(), uint64(l.opts.Seed), l.plan.newsroom, now, opts.Until, 1, quiet)
	l.fh.r = l.r
	if l.msgID != nil {
		l.applyMessageIDs()
	}
}

// readMessageIDs reads the newest Telegram message id of each curated
// source (one probe of posts_source_id_idx each), so that live permalinks
// continue the channels' numbering.
func (l *Live) readMessageIDs(ctx context.Context, tx pgx.Tx) error {
	l.msgID = map[string]int64{}
	for _, src := range curatedSources {
		var id *int64
		err := tx.QueryRow(ctx, `SELECT (raw->>'message_id')::bigint FROM posts WHERE source = $1 AND raw ? 'message_id'
			ORDER BY id DESC LIMIT 1`, src.label).Scan(&id)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("live: read message ids of %s: %w", src.label, err)
		}
		if id != nil {
			l.msgID[src.label] = *id
		}
	}
	l.applyMessageIDs()
	return nil
}

// applyMessageIDs continues each channel's numbering after the larger of
// the stored and the generator's own message id.
func (l *Live) applyMessageIDs() {
	for i, src := range curatedSources {
		if id, ok := l.msgID[src.label]; ok && id > l.posts.msgID[i] {
			l.posts.msgID[i] = id
		}
		l.msgID[src.label] = l.posts.msgID[i]
	}
}

// times spreads n creation times over (l.last, now], strictly increasing,
// at millisecond precision (the last is now when the round has room).
func (l *Live) times(now time.Time, n int) []time.Time {
	from := l.last
	if from.IsZero() || !from.Before(now) {
		from = now.Add(-l.opts.Interval)
	}
	if !from.Before(now) {
		from = now.Add(-time.Millisecond * time.Duration(n))
	}
	out := make([]time.Time, n)
	span := now.Sub(from)
	prev := from
	for i := range out {
		t := from.Add(span * time.Duration(i+1) / time.Duration(n)).Truncate(time.Millisecond)
		if !t.After(prev) {
			t = prev.Add(time.Millisecond)
		}
		out[i], prev = t, t
	}
	return out
}

// ids returns n ids after max.
func ids(max int64, n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = max + int64(i) + 1
	}
	return out
}

// postItems and firehoseItems give the story assigner the generated rows
// (postColumns, firehoseColumns); it writes each row's story_id.
func postItems(rows [][]any) []db.StoryItem {
	items := make([]db.StoryItem, len(rows))
	for i, row := range rows {
		id := new(int64)
		row[9] = id
		items[i] = db.StoryItem{Kind: db.KindPost, ID: row[0].(int64), CreatedAt: row[7].(time.Time),
			Body: row[3].(string), Source: row[1].(string), Coins: row[8].([]string), Story: id}
	}
	return items
}

func firehoseItems(rows [][]any) []db.StoryItem {
	text := func(v any) string {
		s, _ := v.(string)
		return s
	}
	items := make([]db.StoryItem, len(rows))
	for i, row := range rows {
		id := new(int64)
		row[14] = id
		items[i] = db.StoryItem{Kind: db.KindFirehose, ID: row[0].(int64), CreatedAt: row[12].(time.Time),
			Title: text(row[6]), Body: text(row[7]), Source: row[2].(string), Pane: row[1].(string),
			Coins: row[13].([]string), Story: id}
	}
	return items
}
