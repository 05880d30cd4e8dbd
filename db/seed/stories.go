package seed

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedapi/feedapi/db"
	storydet "github.com/feedapi/feedapi/db/story"
)

// Stories in the demo data. Real feeds repeat an event in other words: the
// wire, three news sites and a dozen accounts tell the same thing within
// hours. The generators do the same: a share of their items retell one of
// the stories of the last hours (repeatShare), in the source's own format
// and words. Which items end in one story is then decided as for imported
// items, by the detector (package db/story), here over an in-memory index
// of the stream (the seed writes in time order, so the index only holds
// the last storydet.Window); the stories table is filled from the items
// afterwards, and the detector's index in the database (story_members,
// story_bands) gets the items of the last window, so that live and
// imported items join the seeded stories.

// repeatShare is the share of generated items that retell a recent story.
const repeatShare = 0.3

// repeatWithin is how far back a retold story can be.
const repeatWithin = 6 * time.Hour

// streamRetell drives the choice of the stories retold, apart from the
// generators' own streams, so that the other rows do not change with it.
const streamRetell = 0x726574656c6c0000

// recentStories remembers the last stories a generator told, and picks
// those it retells with a random stream of its own.
type recentStories struct {
	r    *rand.Rand
	list []recentStory
	next int
}

func newRecentStories(seed, stream uint64) recentStories {
	return recentStories{r: rand.New(rand.NewPCG(seed, streamRetell^stream))}
}

type recentStory struct {
	s story
	t time.Time
}

const recentCap = 48

// pick returns a story told within repeatWithin before t to retell, when
// the dice say so.
func (rs *recentStories) pick(t time.Time) (story, bool) {
	r := rs.r
	if len(rs.list) == 0 || !chance(r, repeatShare) {
		return story{}, false
	}
	c := rs.list[r.IntN(len(rs.list))]
	if t.Sub(c.t) > repeatWithin {
		return story{}, false
	}
	return retell(r, c.s), true
}

func (rs *recentStories) add(s story, t time.Time) {
	if len(rs.list) < recentCap {
		rs.list = append(rs.list, recentStory{s, t})
		return
	}
	rs.list[rs.next] = recentStory{s, t}
	rs.next = (rs.next + 1) % recentCap
}

// retell rewords a story's headline the way another outlet would.
func retell(r *rand.Rand, s story) story {
	words := strings.Fields(s.title)
	for i, w := range words {
		if alt, ok := rewordings[strings.ToLower(w)]; ok && chance(r, 0.7) {
			words[i] = alt[r.IntN(len(alt))]
		}
	}
	s.title = strings.Join(words, " ")
	switch r.IntN(4) {
	case 0:
		s.title += ", " + pick(r, []string{"data show", "traders say", "sources say", "report says"})
	case 1:
		if s.sym != "" {
			s.title = s.sym + ": " + s.title
		}
	}
	return s
}

var rewordings = map[string][]string{
	"rises":    {"climbs", "gains", "advances"},
	"climbs":   {"rises", "gains"},
	"jumps":    {"surges", "soars", "spikes"},
	"surges":   {"jumps", "soars", "rallies"},
	"falls":    {"drops", "slides", "declines"},
	"drops":    {"falls", "slides", "sinks"},
	"slides":   {"falls", "drops"},
	"plunges":  {"tumbles", "sinks"},
	"tumbles":  {"plunges", "slumps"},
	"says":     {"said", "states"},
	"launches": {"debuts", "unveils", "rolls out"},
	"buys":     {"acquires", "purchases", "adds"},
	"after":    {"following", "as"},
	"record":   {"all-time", "fresh record"},
}

// storyTracker assigns the seed's items to stories as they are generated
// (in time order, one tracker per stream), and keeps the detector's index
// rows of the items of the last window before until.
type storyTracker struct {
	kind    db.ItemKind
	x       *storydet.Index
	until   time.Time
	added   int
	members [][]any // story_members rows
	bands   [][]any // story_bands rows
}

func newStoryTracker(kind db.ItemKind, first int64, until time.Time) *storyTracker {
	return &storyTracker{kind: kind, x: storydet.NewIndexAt(first), until: until}
}

// forgetEvery is how often (in items) the tracker drops what is out of the
// window.
const forgetEvery = 50_000

// assign returns the story of the item with this id created at t.
func (st *storyTracker) assign(id int64, t time.Time, title, body string) int64 {
	f := storydet.Of(title, body)
	before := st.x.Size()
	s := st.x.Add(f, t)
	if st.x.Size() > before && !t.Before(st.until.Add(-storydet.Window)) {
		kind := string(rune(st.kind))
		st.members = append(st.members, []any{kind, id, s, t, st.x.Start(s), f.Encode()})
		for _, b := range f.Bands() {
			st.bands = append(st.bands, []any{b, t, kind, id})
		}
	}
	st.added++
	if st.added%forgetEvery == 0 {
		st.x.Forget(t.Add(-storydet.Window))
	}
	return s
}

// writeStoryIndex writes the stories of the items written so far (from the
// items themselves), the index rows of the last window, and moves the
// story id sequence past the last story.
func writeStoryIndex(ctx context.Context, tx pgx.Tx, next int64, trackers ...*storyTracker) error {
	if _, err := tx.Exec(ctx, storiesFromItemsSQL); err != nil {
		return fmt.Errorf("seed: stories: %w", err)
	}
	for _, st := range trackers {
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"story_members"}, []string{"kind", "item_id", "story_id", "seen_at", "story_start", "features"},
			pgx.CopyFromRows(st.members)); err != nil {
			return fmt.Errorf("seed: story members: %w", err)
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"story_bands"}, []string{"band", "seen_at", "kind", "item_id"},
			pgx.CopyFromRows(st.bands)); err != nil {
			return fmt.Errorf("seed: story bands: %w", err)
		}
	}
	if _, err := tx.Exec(ctx, "SELECT setval('stories_id_seq', $1::bigint, false)", next); err != nil {
		return fmt.Errorf("seed: story ids: %w", err)
	}
	return nil
}

// storiesFromItemsSQL builds the stories table from the items' story_id:
// what the writers keep up to date item by item, computed at once.
const storiesFromItemsSQL = `INSERT INTO stories (id, first_seen_at, last_seen_at, size, headline, sources, coins, panes)
	WITH items AS (
		SELECT story_id, created_at, 0 AS k, id, source, NULL::text AS pane, coins,
			split_part(btrim(body), E'\n', 1) AS headline
		FROM posts WHERE story_id IS NOT NULL
		UNION ALL
		SELECT story_id, created_at, 1, id, source, pane::text, coins,
			coalesce(nullif(btrim(title), ''), split_part(btrim(coalesce(body, '')), E'\n', 1))
		FROM firehose_messages WHERE story_id IS NOT NULL
	), coins AS (
		SELECT story_id, array_agg(DISTINCT c ORDER BY c) AS coins
		FROM items, unnest(items.coins) c GROUP BY story_id
	)
	SELECT i.story_id, min(created_at), max(created_at), count(*),
		left((array_agg(headline ORDER BY created_at, k, id))[1], 300),
		array_agg(DISTINCT source ORDER BY source),
		coalesce(max(c.coins), '{}'),
		coalesce(array_agg(DISTINCT pane ORDER BY pane) FILTER (WHERE pane IS NOT NULL), '{}')
	FROM items i LEFT JOIN coins c USING (story_id)
	GROUP BY i.story_id`
