package db

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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

func (it StoryEntry) key() (time.Time, ItemKind, int64) {
	if it.Post != nil {
		return it.Post.CreatedAt, KindPost, it.Post.ID
	}
	return it.Firehose.CreatedAt, KindFirehose, it.Firehose.ID
}

// StoryItems returns the items of each story, oldest first (by created_at,
// posts before messages of the same instant, then id), at most limit per
// story (0: all). Each table is read through its story index, per story.
func (s *Store) StoryItems(ctx context.Context, storyIDs []int64, limit int) (map[int64][]StoryEntry, error) {
	out := map[int64][]StoryEntry{}
	if len(storyIDs) == 0 {
		return out, nil
	}
	lim := "ALL"
	if limit > 0 {
		lim = strconv.Itoa(limit)
	}
	ids := pgdialect.Array(storyIDs)
	posts, _, err := queryRows[Post](ctx, s, 0, `SELECT p.* FROM unnest(?::bigint[]) sid,
		LATERAL (SELECT `+s.columns(postType, "", nil)+` FROM posts WHERE story_id = sid ORDER BY created_at, id LIMIT `+lim+`) p`, ids)
	if err != nil {
		return nil, fmt.Errorf("story items: %w", err)
	}
	msgs, _, err := queryRows[FirehoseMessage](ctx, s, 0, `SELECT m.* FROM unnest(?::bigint[]) sid,
		LATERAL (SELECT `+s.columns(firehoseType, "", nil)+` FROM firehose_messages WHERE story_id = sid ORDER BY created_at, id LIMIT `+lim+`) m`, ids)
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
		slices.SortFunc(items, func(a, b StoryEntry) int {
			ta, ka, ia := a.key()
			tb, kb, ib := b.key()
			if c := ta.Compare(tb); c != 0 {
				return c
			}
			if ka != kb {
				if ka == KindPost {
					return -1
				}
				return 1
			}
			return int(ia - ib)
		})
		if limit > 0 && len(items) > limit {
			out[id] = items[:limit]
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
