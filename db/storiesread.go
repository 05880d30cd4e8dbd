package db

import (
	"cmp"
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// Story is a group of items of several sources telling one event
// (migration 20261126200001_stories).
type Story struct {
	bun.BaseModel `bun:"table:stories"`

	ID          int64     `bun:"id,pk"`
	FirstSeenAt time.Time `bun:"first_seen_at,notnull"`
	LastSeenAt  time.Time `bun:"last_seen_at,notnull"`
	Size        int       `bun:"size,notnull"`
	Headline    string    `bun:"headline,notnull"`
	Sources     []string  `bun:"sources,array"`
	Coins       []string  `bun:"coins,array"`
	Panes       []Pane    `bun:"panes,array"`
}

// UID is the stable identifier of the story: st_<id>.
func (s *Story) UID() string { return "st_" + strconv.FormatInt(s.ID, 10) }

// StoryFilter narrows the stories. Zero fields do not filter.
type StoryFilter struct {
	Coins []string  // any of these tickers among the items' coins
	Query string    // websearch_to_tsquery text matched against the headline
	Pane  Pane      // a story is in a pane when any of its items is
	Since time.Time // the story's latest item created at or after Since
}

// StoryKey is the keyset position of a story in the list: its latest
// item's time, then its id, both descending.
type StoryKey struct {
	LastSeenAt time.Time
	ID         int64
}

// Key returns the story's position in the list.
func (s *Story) Key() StoryKey { return StoryKey{s.LastSeenAt, s.ID} }

// ListStories returns up to limit stories after the key (none: from the
// newest), newest first by their latest item, and whether more follow.
// It reads stories_last_seen_idx in order; the filters are tested on each
// story (coins and panes are GIN-indexed for the planner's choice).
func (s *Store) ListStories(ctx context.Context, f StoryFilter, after *StoryKey, limit int) ([]Story, bool, error) {
	q := s.db.NewSelect().Model((*Story)(nil))
	if tickers := uniqueTickers(f.Coins); len(tickers) > 0 {
		q = q.Where("coins && ?::text[]", pgdialect.Array(tickers))
	}
	if f.Query != "" {
		q = q.Where("to_tsvector('english'::regconfig, headline) @@ websearch_to_tsquery('english'::regconfig, ?)", f.Query)
	}
	if f.Pane != "" {
		q = q.Where("panes @> ARRAY[?]::text[]", string(f.Pane))
	}
	if !f.Since.IsZero() {
		q = q.Where("last_seen_at >= ?", clampTime(f.Since))
	}
	if after != nil {
		q = q.Where("(last_seen_at, id) < (?, ?)", after.LastSeenAt, after.ID)
	}
	var rows []Story
	err := q.OrderExpr("last_seen_at DESC, id DESC").Limit(int64(limit+1)).Scan(ctx, &rows)
	if err != nil {
		return nil, false, fmt.Errorf("list stories: %w", err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	return rows, more, nil
}

// StoriesByID returns the stories with these ids, in no particular order
// (a missing id has no row).
func (s *Store) StoriesByID(ctx context.Context, ids []int64) ([]Story, error) {
	var rows []Story
	if err := s.db.NewSelect().Model(&rows).Where("id IN (?)", bun.List(ids)).Scan(ctx); err != nil {
		return nil, fmt.Errorf("stories by id: %w", err)
	}
	return rows, nil
}

// StoryEntry is one item of a story: a post or a firehose message.
type StoryEntry struct {
	Post     *Post
	Firehose *FirehoseMessage
}

// StoryItemKey is the position of an item in its story: oldest first by
// created_at, posts before messages of the same instant, then id.
type StoryItemKey struct {
	CreatedAt time.Time
	Kind      ItemKind
	ID        int64
}

// Key returns the item's position in its story.
func (it StoryEntry) Key() StoryItemKey {
	if it.Post != nil {
		return StoryItemKey{it.Post.CreatedAt, KindPost, it.Post.ID}
	}
	return StoryItemKey{it.Firehose.CreatedAt, KindFirehose, it.Firehose.ID}
}

// compare orders two positions of one story.
func (k StoryItemKey) compare(o StoryItemKey) int {
	if c := k.CreatedAt.Compare(o.CreatedAt); c != 0 {
		return c
	}
	if k.Kind != o.Kind {
		if k.Kind == KindPost {
			return -1
		}
		return 1
	}
	return cmp.Compare(k.ID, o.ID)
}

// after is the condition on the rows of kind's table (columns created_at
// and id) that come after k in their story, as literals: the key is a
// time and two numbers, so the statements that add it keep their
// arguments. "" for no key.
func (k *StoryItemKey) after(kind ItemKind) string {
	if k == nil {
		return ""
	}
	at := "'" + k.CreatedAt.UTC().Format(time.RFC3339Nano) + "'::timestamptz"
	switch {
	case kind == k.Kind:
		return " AND (created_at, id) > (" + at + ", " + strconv.FormatInt(k.ID, 10) + ")"
	case kind == KindPost: // a post after a message: only at a later instant
		return " AND created_at > " + at
	default: // a message after a post: from the same instant on
		return " AND created_at >= " + at
	}
}

// StoryItemsRead says which items of a story a read returns and which of
// their long texts it reads.
type StoryItemsRead struct {
	Limit int // the first Limit items of each story; 0: all
	// After, if set, reads the items after this position instead of
	// from the first.
	After *StoryItemKey
	// Peek reads one item more than Limit, which tells whether more
	// follow; its texts are not measured (StoryTextBytes), as not shown.
	Peek bool
	// PostOmit and FirehoseOmit are the long texts (columns of
	// textColumns) not shown: neither read nor counted.
	PostOmit, FirehoseOmit []string
}

// storyTextBytes is the statement (over the story id sid) of the bytes of
// the long texts that r reads of the story's first r.Limit items, in
// their order, measured as boundBytes measures them; "" when r reads none.
func storyTextBytes(r StoryItemsRead) string {
	measure := func(model reflect.Type, omit []string) string {
		var m []string
		for _, c := range textColumns[model] {
			if !slices.Contains(omit, c.name) {
				m = append(m, fmt.Sprintf(c.measure, "y"))
			}
		}
		return strings.Join(m, " + ")
	}
	pm, fm := measure(postType, r.PostOmit), measure(firehoseType, r.FirehoseOmit)
	if pm == "" && fm == "" {
		return ""
	}
	if pm == "" {
		pm = "0"
	}
	if fm == "" {
		fm = "0"
	}
	postsAfter, firehoseAfter := r.After.after(KindPost), r.After.after(KindFirehose)
	if r.Limit <= 0 {
		// All the items: their sum needs no order, so no sort of a large
		// story's items across the partitions.
		return `(coalesce((SELECT sum(` + pm + `) FROM posts y WHERE y.story_id = sid` + postsAfter + `), 0) +
		coalesce((SELECT sum(` + fm + `) FROM firehose_messages y WHERE y.story_id = sid` + firehoseAfter + `), 0))::bigint`
	}
	lim := strconv.Itoa(r.Limit)
	return `(SELECT coalesce(sum(x._bytes), 0)::bigint FROM (
		(SELECT y.created_at, 0 AS kind, y.id, (` + pm + `)::bigint AS _bytes FROM posts y WHERE y.story_id = sid` + postsAfter + ` ORDER BY y.created_at, y.id LIMIT ` + lim + `)
		UNION ALL
		(SELECT y.created_at, 1, y.id, (` + fm + `)::bigint FROM firehose_messages y WHERE y.story_id = sid` + firehoseAfter + ` ORDER BY y.created_at, y.id LIMIT ` + lim + `)
		ORDER BY 1, 2, 3 LIMIT ` + lim + `) x)`
}

// StoryTextBytes returns, by story, the bytes of the long texts that r
// reads of its items, as the API writes them, measured in the database
// without reading the texts.
// A story without items, or a read of no long text, has none.
func (s *Store) StoryTextBytes(ctx context.Context, storyIDs []int64, r StoryItemsRead) (map[int64]int64, error) {
	out := map[int64]int64{}
	m := storyTextBytes(r)
	if m == "" || len(storyIDs) == 0 {
		return out, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT sid, `+m+` FROM unnest(?::bigint[]) sid`, pgdialect.Array(storyIDs))
	if err != nil {
		return nil, fmt.Errorf("story text bytes: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, n int64
		if err := rows.Scan(&id, &n); err != nil {
			return nil, fmt.Errorf("story text bytes: %w", err)
		}
		if n > 0 {
			out[id] = n
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("story text bytes: %w", err)
	}
	return out, nil
}

// StoryItems returns the items of each story, oldest first (StoryItemKey),
// at most r.Limit per story (0: all; one more with r.Peek) after r.After,
// without the long texts r omits. Each table is read
// through its story index, per story. A read bounded in bytes measures the
// stories first (StoryTextBytes) and reads only those within its budget,
// so that the texts of a story over it are never read.
func (s *Store) StoryItems(ctx context.Context, storyIDs []int64, r StoryItemsRead) (map[int64][]StoryEntry, error) {
	out := map[int64][]StoryEntry{}
	if len(storyIDs) == 0 {
		return out, nil
	}
	lim, n := "ALL", r.Limit
	if n > 0 {
		if r.Peek {
			n++
		}
		lim = strconv.Itoa(n)
	}
	ids := pgdialect.Array(storyIDs)
	posts, _, err := queryRows[Post](ctx, s, 0, `SELECT p.* FROM unnest(?::bigint[]) sid,
		LATERAL (SELECT `+s.columns(postType, "", r.PostOmit)+` FROM posts WHERE story_id = sid`+r.After.after(KindPost)+` ORDER BY created_at, id LIMIT `+lim+`) p`, ids)
	if err != nil {
		return nil, fmt.Errorf("story items: %w", err)
	}
	msgs, _, err := queryRows[FirehoseMessage](ctx, s, 0, `SELECT m.* FROM unnest(?::bigint[]) sid,
		LATERAL (SELECT `+s.columns(firehoseType, "", r.FirehoseOmit)+` FROM firehose_messages WHERE story_id = sid`+r.After.after(KindFirehose)+` ORDER BY created_at, id LIMIT `+lim+`) m`, ids)
	if err != nil {
		return nil, fmt.Errorf("story items: %w", err)
	}
	for i := range posts {
		p := &posts[i]
		out[*p.StoryID] = append(out[*p.StoryID], StoryEntry{Post: p})
	}
	for i := range msgs {
		m := &msgs[i]
		out[*m.StoryID] = append(out[*m.StoryID], StoryEntry{Firehose: m})
	}
	for id, items := range out {
		slices.SortFunc(items, func(a, b StoryEntry) int { return a.Key().compare(b.Key()) })
		if n > 0 && len(items) > n {
			out[id] = items[:n]
		}
	}
	return out, nil
}

// SourceDelay is how late a source's items arrive: received_at minus
// created_at over its items received in the last day.
type SourceDelay struct {
	Feed   string // "posts" or "firehose"
	Source string
	Items  int
	Median time.Duration
	P95    time.Duration
}

// DelayWindow is the period SourceDelays looks back over, and DelaySample
// the most items of each feed it reads: the latest received, so that a
// bulk import does not make every answer read a day of rows.
const (
	DelayWindow = 24 * time.Hour
	DelaySample = 20_000
)

// SourceDelays returns the median and 95th percentile delay of each
// source's items received within DelayWindow (at most the DelaySample
// latest of each feed), by feed then source. It reads the received_at
// indexes newest first.
func (s *Store) SourceDelays(ctx context.Context) ([]SourceDelay, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT feed, source, count(*),
			percentile_cont(0.5) WITHIN GROUP (ORDER BY d), percentile_cont(0.95) WITHIN GROUP (ORDER BY d)
		FROM ((SELECT 'posts' AS feed, source, extract(epoch FROM received_at - created_at) AS d
				FROM posts WHERE received_at >= now() - ?::interval ORDER BY received_at DESC LIMIT ?)
			UNION ALL
			(SELECT 'firehose', source, extract(epoch FROM received_at - created_at)
				FROM firehose_messages WHERE received_at >= now() - ?::interval ORDER BY received_at DESC LIMIT ?)) x
		GROUP BY feed, source ORDER BY feed DESC, source`, "24 hours", DelaySample, "24 hours", DelaySample)
	if err != nil {
		return nil, fmt.Errorf("source delays: %w", err)
	}
	defer rows.Close()
	var out []SourceDelay
	for rows.Next() {
		var d SourceDelay
		var med, p95 float64
		if err := rows.Scan(&d.Feed, &d.Source, &d.Items, &med, &p95); err != nil {
			return nil, fmt.Errorf("source delays: %w", err)
		}
		d.Median = time.Duration(med * float64(time.Second)).Round(time.Millisecond)
		d.P95 = time.Duration(p95 * float64(time.Second)).Round(time.Millisecond)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("source delays: %w", err)
	}
	return out, nil
}
