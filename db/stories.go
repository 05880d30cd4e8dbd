package db

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/feedapi/feedapi/db/story"
)

// Story assignment (migration 20261126200001_stories): every writer of
// posts and firehose messages (the importer, the seed's live publisher)
// asks a StoryAssigner for the story of each new item before writing it,
// and writes the returned plan in the transaction that writes the items.

// ItemKind tells the two tables whose items form stories.
type ItemKind byte

const (
	KindPost     ItemKind = 'p'
	KindFirehose ItemKind = 'f'
)

// StoryItem is an item being written, as the assigner reads it; Assign
// sets *Story.
type StoryItem struct {
	Kind      ItemKind
	ID        int64
	CreatedAt time.Time
	Title     string // "" for posts and untitled messages
	Body      string
	Source    string
	Pane      string // "" for posts
	Coins     []string
	// Story receives the item's story id (the row's story_id column).
	Story *int64

	// The item's features and index keys, set by Prepare.
	features *story.Features
	bands    []int64
}

// Prepare computes what Assign reads of the item's text. Assign prepares
// the items not prepared yet; a writer that assigns its batches one after
// the other prepares a batch while the batch before it is assigned, so
// that this work, most of an item's, is not part of that chain.
func (it *StoryItem) Prepare() {
	if it.features == nil {
		f := story.Of(it.Title, it.Body)
		it.features, it.bands = &f, f.Bands()
	}
}

// Querier runs statements: a bun transaction or database (SQLQuerier) or
// a pgx transaction (PgxQuerier), so that the importer and the seed's COPY
// path share one assigner.
type Querier interface {
	Exec(ctx context.Context, query string, args ...any) error
	Query(ctx context.Context, query string, args ...any) (Rows, error)
}

// Rows is the part of a result set the assigner reads. Close releases
// rows not read to the end (the end closes them).
type Rows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
	Close()
}

// SQLQuerier runs statements on database/sql (bun.DB, bun.Tx, bun.Conn).
type SQLQuerier struct {
	DB interface {
		ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
		QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	}
}

func (q SQLQuerier) Exec(ctx context.Context, query string, args ...any) error {
	_, err := q.DB.ExecContext(ctx, query, args...)
	return err
}

func (q SQLQuerier) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	rows, err := q.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	return sqlRows{rows}, nil
}

// sqlRows closes itself at the end, as pgx's rows do.
type sqlRows struct{ *sql.Rows }

func (r sqlRows) Close() { _ = r.Rows.Close() }

func (r sqlRows) Next() bool {
	if r.Rows.Next() {
		return true
	}
	_ = r.Rows.Close()
	return false
}

// PgxQuerier runs statements on a pgx transaction.
type PgxQuerier struct{ Tx pgx.Tx }

func (q PgxQuerier) Exec(ctx context.Context, query string, args ...any) error {
	_, err := q.Tx.Exec(ctx, query, args...)
	return err
}

func (q PgxQuerier) Query(ctx context.Context, query string, args ...any) (Rows, error) {
	return q.Tx.Query(ctx, query, args...)
}

// StoryAssigner assigns items to stories. It remembers the items of its
// last plans, so that a writer that commits batches in order but writes
// them concurrently (the importer) finds the stories of the batch before,
// not committed yet; and from its second batch on it keeps a copy of the
// window's index (storyWindow). Not safe for concurrent use.
type StoryAssigner struct {
	recent   [2][]member          // the members of the last two plans
	assigned [2]map[itemKey]int64 // the story of every item of the last two plans
	// ids are story ids drawn from the sequence and not used yet: a
	// writer of many batches draws them in growing blocks, so that most
	// batches need no statement of their own for their new stories.
	ids   []int64
	block int

	// MaxWindow bounds the assigner's copy of the window's index
	// (DefaultMaxWindow when 0); below 0, every batch probes the database.
	MaxWindow int
	window    *storyWindow // from the second batch on, unless probing
	probing   bool         // the window outgrew MaxWindow: probe for good
	assigns   int          // batches assigned
	marks     uint64       // the last stamp of member.mark
	// planned are the members of the last plans by batch (assigns modulo
	// its length), until a warm lookup fetches them from the database:
	// their features need not be decoded again.
	planned [8]map[itemKey]*member
	// scratch are the maps of an assignment, cleared and used again by
	// the next: a writer's batches are alike in size.
	scratch struct {
		byBand   map[int64][]*member
		known    map[int64]knownStory
		inRecent map[itemKey]bool
	}
}

// maxIDBlock bounds the story ids an assigner draws ahead: ids drawn and
// never used are gaps in the sequence, as a rolled back insert leaves.
const maxIDBlock = 1024

type itemKey struct {
	kind ItemKind
	id   int64
}

// member is an item whose features are indexed.
type member struct {
	kind  ItemKind
	id    int64
	story int64
	at    time.Time
	start time.Time      // the story's first item
	f     story.Features // without its words (Slim) when read from the database
	bands []int64
	mark  uint64 // see Assign
}

// knownStory is what an assignment knows of a story from its members
// among the candidates: how many are indexed and when the first began.
type knownStory struct {
	members int
	start   time.Time
}

// with counts one more member, whose story began at start.
func (k knownStory) with(start time.Time) knownStory {
	if k.members == 0 || start.Before(k.start) {
		k.start = start
	}
	k.members++
	return k
}

// byKey orders members by kind and id: candidates are considered in this
// order whichever found them, the probe or the copy of the window, so that
// between candidates of equal score the same one wins.
func byKey(x, y *member) int {
	return cmp.Or(cmp.Compare(x.kind, y.kind), cmp.Compare(x.id, y.id))
}

// StoryPlan is what a batch of assigned items writes besides themselves:
// new stories and the growth of others, the members and bands to index.
type StoryPlan struct {
	stories map[int64]*storyDelta
	members []member
}

// storyDelta is the growth of one story by this batch's items.
type storyDelta struct {
	id       int64
	n        int
	first    time.Time
	last     time.Time
	headline string
	sources  []string
	coins    []string
	panes    []string
}

// Assign sets the story of each item: an item already stored keeps its
// story; a new one joins the story of the most similar near-duplicate
// seen within story.Window (in the database, in this batch, or in the
// assigner's last plans), or starts a new story. It reads q (committed
// rows and the probe of story_bands) and writes nothing: the plan is
// written by StoryPlan.Write in the items' transaction.
func (a *StoryAssigner) Assign(ctx context.Context, q Querier, items []StoryItem) (*StoryPlan, error) {
	plan := &StoryPlan{stories: map[int64]*storyDelta{}}
	if len(items) == 0 {
		return plan, nil
	}
	if a.scratch.byBand == nil {
		a.scratch.byBand, a.scratch.known, a.scratch.inRecent = map[int64][]*member{}, map[int64]knownStory{}, map[itemKey]bool{}
	}
	order := make([]int, 0, len(items))
	var probe, postIDs, firehoseIDs []int64
	var lo, hi time.Time
	for i := range items {
		it := &items[i]
		// Written by a batch not committed yet: it keeps the story given.
		if s := a.pending(it); s != 0 {
			*it.Story = s
			continue
		}
		if it.Kind == KindPost {
			postIDs = append(postIDs, it.ID)
		} else {
			firehoseIDs = append(firehoseIDs, it.ID)
		}
		it.Prepare()
		probe = append(probe, it.bands...)
		if lo.IsZero() || it.CreatedAt.Before(lo) {
			lo = it.CreatedAt
		}
		if it.CreatedAt.After(hi) {
			hi = it.CreatedAt
		}
		order = append(order, i)
	}
	if len(order) == 0 {
		return plan, nil
	}
	// One statement: the stories of the items already stored, the
	// candidates of the band index, and story ids for the new stories.
	draw := 0
	if len(a.ids) < len(order) {
		draw = len(order) - len(a.ids) + a.block
		a.block = min(max(2*a.block, 1), maxIDBlock)
	}
	// The window of the batch's items, as a half-open range of the
	// database's microseconds.
	from := lo.Add(-story.Window).Truncate(time.Microsecond)
	to := hi.Add(story.Window).Truncate(time.Microsecond).Add(time.Microsecond)
	args := lookupArgs{posts: postIDs, firehose: firehoseIDs, bands: probe, from: from, to: to, draw: draw}
	a.assigns++
	if a.warm() {
		req := a.window.request(from, to, a.maxWindow(), a.takePlanned)
		args.bands, args.window = nil, &req
	}
	look, err := lookup(ctx, q, args)
	if err != nil {
		a.window = nil // its bounds moved without what they hold
		return nil, err
	}
	if args.window != nil {
		if look.found, err = a.candidates(ctx, q, look, probe, from, to); err != nil {
			return nil, err
		}
	}
	a.ids = append(a.ids, look.ids...)
	slices.Sort(a.ids)
	// Items already stored keep their story (an update of an item does
	// not move it).
	order = slices.DeleteFunc(order, func(i int) bool {
		it := &items[i]
		if s := look.stored[itemKey{it.Kind, it.ID}]; s != 0 {
			*it.Story = s
			return true
		}
		return false
	})
	if len(order) == 0 {
		return plan, nil
	}
	// Candidates: the last plans', the database's that are not among them
	// (a plan committed already is in both), and this batch's own as it
	// goes; each counted once, whether or not the plans before have
	// committed. A member is marked with a.marks when counted, and again
	// when an item considers it (it may share several bands with the
	// item): stamps rather than sets, so that the candidates of an item
	// cost no allocation.
	byBand, known, inRecent := a.scratch.byBand, a.scratch.known, a.scratch.inRecent
	clear(byBand)
	clear(known)
	clear(inRecent)
	a.marks++
	count := func(m *member) {
		if m.mark != a.marks {
			m.mark = a.marks
			known[m.story] = known[m.story].with(m.start)
		}
	}
	for _, ms := range a.recent {
		for i := range ms {
			m := &ms[i]
			count(m)
			for _, b := range m.bands {
				byBand[b] = append(byBand[b], m)
			}
			inRecent[itemKey{m.kind, m.id}] = true
		}
	}
	for b, list := range look.found {
		kept := list[:0] // the lookup's own lists
		for _, m := range list {
			if !inRecent[itemKey{m.kind, m.id}] {
				count(m)
				kept = append(kept, m)
			}
		}
		if len(byBand[b]) == 0 {
			byBand[b] = kept
		} else {
			byBand[b] = append(byBand[b], kept...)
		}
	}

	slices.SortStableFunc(order, func(x, y int) int {
		if c := items[x].CreatedAt.Compare(items[y].CreatedAt); c != 0 {
			return c
		}
		return int(items[x].ID - items[y].ID)
	})
	var fresh []*storyDelta // new stories, numbered once counted
	for _, i := range order {
		it := &items[i]
		a.marks++
		pick := story.NewPicker(*it.features, it.CreatedAt)
		for _, b := range it.bands {
			for _, m := range byBand[b] {
				if m.mark != a.marks {
					m.mark = a.marks
					pick.Consider(m.story, &m.f, m.at, known[m.story].start)
				}
			}
		}
		id, ok := pick.Story()
		if !ok {
			// A provisional id below zero until the new ids are drawn.
			id = -int64(len(fresh) + 1)
			fresh = append(fresh, &storyDelta{id: id})
			plan.stories[id] = fresh[len(fresh)-1]
		}
		*it.Story = id
		plan.grow(it)
		k, ok := known[id]
		start := it.CreatedAt
		if ok && k.start.Before(start) {
			start = k.start
		}
		if k.members < story.MembersIndexed && len(it.bands) > 0 {
			m := &member{kind: it.Kind, id: it.ID, story: id, at: it.CreatedAt, start: start, f: *it.features, bands: it.bands}
			plan.members = append(plan.members, *m)
			for _, b := range m.bands {
				byBand[b] = append(byBand[b], m)
			}
			known[id] = k.with(start)
		}
	}
	if len(fresh) > 0 {
		// Drawn with the lookup: at least as many as the items to assign.
		ids := a.ids[:len(fresh)]
		a.ids = a.ids[len(fresh):]
		renumber := map[int64]int64{}
		for k, d := range fresh {
			renumber[d.id] = ids[k]
			delete(plan.stories, d.id)
			d.id = ids[k]
			plan.stories[d.id] = d
		}
		for _, i := range order {
			if s := *items[i].Story; s < 0 {
				*items[i].Story = renumber[s]
			}
		}
		for k := range plan.members {
			if s := plan.members[k].story; s < 0 {
				plan.members[k].story = renumber[s]
			}
		}
	}
	a.recent[0], a.recent[1] = a.recent[1], plan.members
	planned := a.planned[a.assigns%len(a.planned)]
	if planned == nil {
		planned = map[itemKey]*member{}
		a.planned[a.assigns%len(a.planned)] = planned
	}
	clear(planned)
	for k := range plan.members {
		m := &plan.members[k]
		planned[itemKey{m.kind, m.id}] = m
	}
	assigned := make(map[itemKey]int64, len(order))
	for _, i := range order {
		assigned[itemKey{items[i].Kind, items[i].ID}] = *items[i].Story
	}
	a.assigned[0], a.assigned[1] = a.assigned[1], assigned
	return plan, nil
}

func (a *StoryAssigner) maxWindow() int {
	if a.MaxWindow == 0 {
		return DefaultMaxWindow
	}
	return a.MaxWindow
}

// warm tells whether this batch's candidates come from the copy of the
// window, creating it for the second batch.
func (a *StoryAssigner) warm() bool {
	if a.probing || a.maxWindow() < 0 || a.assigns < 2 {
		return false
	}
	if a.window == nil {
		a.window = newStoryWindow()
	}
	return true
}

// candidates brings the copy of the window up to date with what a warm
// lookup fetched and returns the candidates of bands in [from, to); when the
// window holds more than MaxWindow items, it drops the copy and probes the
// database, as it will from now on.
func (a *StoryAssigner) candidates(ctx context.Context, q Querier, look looked, bands []int64, from, to time.Time) (map[int64][]*member, error) {
	w := a.window
	for _, m := range look.window {
		w.add(m)
	}
	w.unseen = look.unseen
	if !look.full && len(w.members) <= a.maxWindow() {
		return w.probe(bands, from, to), nil
	}
	a.window, a.probing = nil, true
	probed, err := lookup(ctx, q, lookupArgs{bands: bands, from: from, to: to})
	return probed.found, err
}

// takePlanned returns the member the assigner planned for key, if one of
// its last plans did, and forgets it: a warm lookup fetches each member
// once.
func (a *StoryAssigner) takePlanned(key itemKey) *member {
	for _, planned := range a.planned {
		if m := planned[key]; m != nil {
			delete(planned, key)
			return m
		}
	}
	return nil
}

// pending returns the story given to it by one of the last plans (0 for
// none): an item of a batch not committed yet.
func (a *StoryAssigner) pending(it *StoryItem) int64 {
	for _, as := range a.assigned {
		if s := as[itemKey{it.Kind, it.ID}]; s != 0 {
			return s
		}
	}
	return 0
}

// grow counts it in its story's delta.
func (p *StoryPlan) grow(it *StoryItem) {
	d := p.stories[*it.Story]
	if d == nil {
		d = &storyDelta{id: *it.Story}
		p.stories[d.id] = d
	}
	d.n++
	if d.first.IsZero() || it.CreatedAt.Before(d.first) {
		d.first = it.CreatedAt
		d.headline = Headline(it.Title, it.Body)
	}
	if it.CreatedAt.After(d.last) {
		d.last = it.CreatedAt
	}
	d.sources = addSorted(d.sources, it.Source)
	for _, c := range it.Coins {
		d.coins = addSorted(d.coins, c)
	}
	if it.Pane != "" {
		d.panes = addSorted(d.panes, it.Pane)
	}
}

func addSorted(list []string, s string) []string {
	i, found := slices.BinarySearch(list, s)
	if found {
		return list
	}
	return slices.Insert(list, i, s)
}

// maxHeadline bounds a story's headline (in runes).
const maxHeadline = 300

// Headline is what a story shows of its first item: the title, or the
// first line of the body.
func Headline(title, body string) string {
	h := strings.TrimSpace(title)
	if h == "" {
		h, _, _ = strings.Cut(strings.TrimSpace(body), "\n")
		h = strings.TrimSpace(h)
	}
	if r := []rune(h); len(r) > maxHeadline {
		h = string(r[:maxHeadline-1]) + "…"
	}
	return h
}

// An assignment runs one statement: lookupProbeSQL, or for a writer that
// keeps a copy of the window lookupWindowSQL. Both begin with the rows of
// story_lookup_stored (migration 20261127200001_story_lookup_plans): the
// story of each post already stored ($1; 0 for a row stored before stories
// existed), rows of kind 's'; the firehose messages already stored ($2),
// rows of kind 'i', whose stories storedFirehoseSQL reads in a statement
// of its own for the batches that update messages; and $3 story ids drawn
// from the sequence, rows of kind 'n'. The functions of that migration
// keep their plans for the connection, because planning was most of a
// single item's assignment.
const lookupStoredSQL = `SELECT * FROM story_lookup_stored($1::bigint[], $2::bigint[], $3::int)`

// storedFirehoseSQL reads the stories of the firehose messages ($1) that
// a lookup found stored (0 for a row stored before stories existed).
const storedFirehoseSQL = `SELECT id, coalesce(story_id, 0) FROM firehose_messages WHERE id = ANY($1::bigint[])`

// lookupProbeSQL is the lookup of a writer that probes the band index for
// the candidates of the new items, rows of kind 'm': the indexed items
// that share a band ($4) with them and were seen within the window ($5 to
// $6): one probe of story_bands_probe_idx per band, reading at most $7
// (story.MaxPerBand) items of it, the most recent, each item once with the
// bands it was found by (so that the caller files it under them without
// computing its bands again).
const lookupProbeSQL = lookupStoredSQL + `
UNION ALL
SELECT 'm', b.kind::text, b.item_id, b.bands, m.story_id, m.seen_at, m.story_start, m.features
	FROM (SELECT l.kind, l.item_id, array_to_string(array_agg(k), ',') AS bands
		FROM unnest($4::bigint[]) k,
			LATERAL (SELECT kind, item_id FROM story_bands WHERE band = k AND seen_at >= $5 AND seen_at < $6
				ORDER BY seen_at DESC LIMIT $7) l
		GROUP BY l.kind, l.item_id) b
	JOIN story_members m ON m.kind = b.kind AND m.item_id = b.item_id`

// lookupWindowSQL is the lookup of a writer that keeps a copy of the
// window (storyWindow), story_window_lookup: after the stored part, in one
// snapshot, the items indexed by the transactions the writer's last
// lookup's snapshot could not see (those from $4, its xmax, and $5, the
// ones open then) and those seen within the ranges its copy lacks ($6 to
// $7, at most $8 of each; none for a writer whose copy holds its batch's
// window), rows of kind 'w'; and a row 'x' with what the snapshot cannot
// see: its xmax, and its open transactions joined by commas.
const lookupWindowSQL = `SELECT * FROM story_window_lookup($1::bigint[], $2::bigint[], $3::int,
	$4::bigint, $5::bigint[], $6::timestamptz[], $7::timestamptz[], $8::int)`

// lookupArgs are the parameters of a lookup.
type lookupArgs struct {
	posts, firehose []int64 // items whose stored story is asked for
	bands           []int64 // bands to probe
	from, to        time.Time
	draw            int            // story ids to draw
	window          *windowRequest // nil: no copy of the window to bring up to date
}

// looked is what a lookup found.
type looked struct {
	stored map[itemKey]int64
	ids    []int64
	// found are the probe's candidates: under each band, the items found
	// by it, in byKey order.
	found  map[int64][]*member
	window []*member // for the copy of the window, with all their bands
	// full is set when a range of the window has more items than the copy
	// may hold.
	full   bool
	unseen unseen
}

func lookup(ctx context.Context, q Querier, args lookupArgs) (looked, error) {
	out := looked{stored: map[itemKey]int64{}}
	bands := distinct(args.bands)
	var (
		since            *int64
		open             []int64
		limit            int
		rangeLo, rangeHi []time.Time
	)
	if w := args.window; w != nil {
		if w.since != nil {
			since, open = &w.since.xmax, w.since.open
		}
		limit, rangeLo, rangeHi = w.limit, w.from, w.to
	}
	ranges := make([]int, len(rangeLo)) // rows of each range
	// Every lookup begins with story_lookup_stored's parameters.
	params := []any{nonNil(args.posts), nonNil(args.firehose), args.draw}
	query := lookupWindowSQL
	if args.window == nil {
		query, params = lookupProbeSQL, append(params, nonNil(bands), args.from, args.to, story.MaxPerBand)
	} else {
		params = append(params, since, nonNil(open), nonNilTimes(rangeLo), nonNilTimes(rangeHi), limit)
	}
	rows, err := q.Query(ctx, query, params...)
	if err != nil {
		return out, fmt.Errorf("stories: look up: %w", err)
	}
	defer rows.Close()
	var storedFirehose []int64
	var probed []*member // rows 'm', with the bands they were found by
	for rows.Next() {
		var (
			src, kind   string
			id, st      int64
			found, enc  *string
			seen, start *time.Time
		)
		if err := rows.Scan(&src, &kind, &id, &found, &st, &seen, &start, &enc); err != nil {
			return out, fmt.Errorf("stories: look up: %w", err)
		}
		switch src {
		case "n":
			out.ids = append(out.ids, st)
			continue
		case "i":
			storedFirehose = append(storedFirehose, id)
			continue
		case "x":
			out.unseen.xmax = st
			if found != nil {
				if out.unseen.open, err = parseInts(*found); err != nil {
					return out, fmt.Errorf("stories: look up: open transactions: %w", err)
				}
			}
			continue
		}
		if len(kind) != 1 {
			return out, fmt.Errorf("stories: look up: item kind %q", kind)
		}
		key := itemKey{ItemKind(kind[0]), id}
		if src == "s" {
			out.stored[key] = st
			continue
		}
		if seen == nil || start == nil || enc == nil {
			return out, fmt.Errorf("stories: look up: indexed item %c %d without its features", key.kind, id)
		}
		if src == "w" {
			for i, lo := range rangeLo {
				if !seen.Before(lo) && seen.Before(rangeHi[i]) {
					ranges[i]++
					out.full = out.full || ranges[i] >= limit
				}
			}
			if args.window.held[key] != nil {
				continue
			}
		}
		m := &member{kind: key.kind, id: id, story: st, at: *seen, start: *start}
		if src == "w" {
			if own := args.window.planned(key); own != nil {
				m.f, m.bands = own.f.Slim(), own.bands
			} else {
				if m.f, err = story.Decode(*enc); err != nil {
					return out, err
				}
				m.bands, m.f = m.f.Bands(), m.f.Slim()
			}
			out.window = append(out.window, m)
			continue
		}
		if m.f, err = story.Decode(*enc); err != nil {
			return out, err
		}
		if found == nil {
			return out, fmt.Errorf("stories: look up: indexed item %c %d without its bands", key.kind, id)
		}
		if m.bands, err = parseInts(*found); err != nil {
			return out, fmt.Errorf("stories: look up: bands: %w", err)
		}
		m.f = m.f.Slim()
		probed = append(probed, m)
	}
	if err := rows.Err(); err != nil {
		return out, fmt.Errorf("stories: look up: %w", err)
	}
	slices.SortFunc(probed, byKey)
	out.found = make(map[int64][]*member, len(bands))
	for _, m := range probed {
		for _, b := range m.bands {
			out.found[b] = append(out.found[b], m)
		}
	}
	if len(storedFirehose) > 0 {
		if err := lookupStoredFirehose(ctx, q, storedFirehose, out.stored); err != nil {
			return out, err
		}
	}
	if len(out.ids) != args.draw {
		return out, fmt.Errorf("stories: look up: %d story ids drawn, want %d", len(out.ids), args.draw)
	}
	if args.window != nil && out.unseen.xmax == 0 {
		return out, fmt.Errorf("stories: look up: no snapshot")
	}
	return out, nil
}

// lookupStoredFirehose sets the stories of the stored firehose messages
// ids in stored. A message deleted since the lookup found it is left out,
// as a row stored before stories existed is: both are assigned as new.
func lookupStoredFirehose(ctx context.Context, q Querier, ids []int64, stored map[itemKey]int64) error {
	rows, err := q.Query(ctx, storedFirehoseSQL, ids)
	if err != nil {
		return fmt.Errorf("stories: look up stored messages: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, s int64
		if err := rows.Scan(&id, &s); err != nil {
			return fmt.Errorf("stories: look up stored messages: %w", err)
		}
		stored[itemKey{KindFirehose, id}] = s
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("stories: look up stored messages: %w", err)
	}
	return nil
}

// parseInts reads integers joined by commas, as the lookups aggregate
// them (array_to_string, string_agg).
func parseInts(s string) ([]int64, error) {
	var out []int64
	for x := range strings.SplitSeq(s, ",") {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", x, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// distinct returns the bands of a batch's items, each once, in order: a
// band shared by several items is probed once.
func distinct(bands []int64) []int64 {
	return slices.Compact(slices.Sorted(slices.Values(bands)))
}

// nonNil sends an empty array rather than NULL.
func nonNil(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

func nonNilTimes(ts []time.Time) []time.Time {
	if ts == nil {
		return []time.Time{}
	}
	return ts
}

// upsertStoriesSQL adds a batch's items to their stories, creating the new
// ones; rows are taken in id order, so that two writers lock shared
// stories in the same order. A list is rebuilt only when the batch brings
// something it lacks: most items join from a source, with coins and a
// pane, their story has already, and rebuilding the three lists was as
// costly as the rest of the row's update.
const upsertStoriesSQL = `INSERT INTO stories AS s (id, first_seen_at, last_seen_at, size, headline, sources, coins, panes)
	SELECT id, first, last, n, headline,
		string_to_array(sources, E'\x1f'), coalesce(string_to_array(coins, E'\x1f'), '{}'), coalesce(string_to_array(panes, E'\x1f'), '{}')
	FROM unnest($1::bigint[], $2::timestamptz[], $3::timestamptz[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[])
		AS v(id, first, last, n, headline, sources, coins, panes)
	ORDER BY id
	ON CONFLICT (id) DO UPDATE SET
		size = s.size + EXCLUDED.size,
		headline = CASE WHEN EXCLUDED.first_seen_at < s.first_seen_at THEN EXCLUDED.headline ELSE s.headline END,
		first_seen_at = least(s.first_seen_at, EXCLUDED.first_seen_at),
		last_seen_at = greatest(s.last_seen_at, EXCLUDED.last_seen_at),
		sources = CASE WHEN EXCLUDED.sources <@ s.sources THEN s.sources
			ELSE ARRAY(SELECT DISTINCT x FROM unnest(s.sources || EXCLUDED.sources) x ORDER BY x) END,
		coins = CASE WHEN EXCLUDED.coins <@ s.coins THEN s.coins
			ELSE ARRAY(SELECT DISTINCT x FROM unnest(s.coins || EXCLUDED.coins) x ORDER BY x) END,
		panes = CASE WHEN EXCLUDED.panes <@ s.panes THEN s.panes
			ELSE ARRAY(SELECT DISTINCT x FROM unnest(s.panes || EXCLUDED.panes) x ORDER BY x) END`

// insertIndexSQL indexes the members of a batch: their features and their
// bands, in one statement.
const insertIndexSQL = `WITH members AS (
		INSERT INTO story_members (kind, item_id, story_id, seen_at, story_start, features)
		SELECT k::"char", i, s, t, st, f FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::timestamptz[], $5::timestamptz[], $6::text[]) AS v(k, i, s, t, st, f)
		ON CONFLICT DO NOTHING)
	INSERT INTO story_bands (band, seen_at, kind, item_id)
	SELECT b, t, k::"char", i FROM unnest($7::bigint[], $8::timestamptz[], $9::text[], $10::bigint[]) AS v(b, t, k, i)`

// Write writes the plan: in the transaction that writes its items, so that
// the stories and the items commit together.
func (p *StoryPlan) Write(ctx context.Context, q Querier) error {
	if err := p.WriteIndex(ctx, q); err != nil {
		return err
	}
	return p.WriteStories(ctx, q)
}

// WriteStories creates the plan's new stories and adds its items to the
// others. It locks the rows of those stories until the transaction ends: a
// writer that writes plans concurrently runs the WriteStories of its plans
// one after the other, in the order they commit (the index rows of
// WriteIndex lock nothing another plan writes).
func (p *StoryPlan) WriteStories(ctx context.Context, q Querier) error {
	if p == nil || len(p.stories) == 0 {
		return nil
	}
	r := p.rows()
	if err := q.Exec(ctx, upsertStoriesSQL, r.ids, r.first, r.last, r.sizes, r.heads, r.sources, r.coins, r.panes); err != nil {
		return fmt.Errorf("stories: write stories: %w", err)
	}
	return nil
}

// storyRows are the stories of a plan as the statements that write them
// unnest: one array per column, a list joined by \x1f, and an empty list of
// coins or panes NULL (which the statements read as no element).
type storyRows struct {
	ids          []int64
	first, last  []time.Time
	sizes        []int32
	heads        []string
	sources      []string
	coins, panes []*string
}

func (p *StoryPlan) rows() storyRows {
	n := len(p.stories)
	r := storyRows{
		ids: make([]int64, 0, n), first: make([]time.Time, 0, n), last: make([]time.Time, 0, n),
		sizes: make([]int32, 0, n), heads: make([]string, 0, n), sources: make([]string, 0, n),
		coins: make([]*string, 0, n), panes: make([]*string, 0, n),
	}
	join := func(list []string) *string {
		if len(list) == 0 {
			return nil
		}
		s := strings.Join(list, "\x1f")
		return &s
	}
	for _, d := range p.stories {
		r.ids = append(r.ids, d.id)
		r.first, r.last = append(r.first, d.first), append(r.last, d.last)
		r.sizes = append(r.sizes, int32(d.n))
		r.heads = append(r.heads, d.headline)
		r.sources = append(r.sources, strings.Join(d.sources, "\x1f"))
		r.coins, r.panes = append(r.coins, join(d.coins)), append(r.panes, join(d.panes))
	}
	return r
}

// WriteIndex indexes the plan's members (the first items of their stories)
// for the probes of later items.
func (p *StoryPlan) WriteIndex(ctx context.Context, q Querier) error {
	if p == nil || len(p.members) == 0 {
		return nil
	}
	var (
		kinds    []string
		items    []int64
		stories  []int64
		seen     []time.Time
		starts   []time.Time
		features []string
		bBand    []int64
		bSeen    []time.Time
		bKind    []string
		bItem    []int64
	)
	type bandRow struct {
		band int64
		m    *member
	}
	var rows []bandRow
	for i := range p.members {
		m := &p.members[i]
		kinds = append(kinds, string(rune(m.kind)))
		items = append(items, m.id)
		stories = append(stories, m.story)
		seen = append(seen, m.at)
		starts = append(starts, m.start)
		features = append(features, m.f.Encode())
		for _, b := range m.bands {
			rows = append(rows, bandRow{b, m})
		}
	}
	// In index order: the inserts walk the band index's pages in order
	// rather than at random.
	slices.SortFunc(rows, func(x, y bandRow) int { return cmp.Compare(x.band, y.band) })
	for _, r := range rows {
		bBand, bSeen, bKind, bItem = append(bBand, r.band), append(bSeen, r.m.at), append(bKind, string(rune(r.m.kind))), append(bItem, r.m.id)
	}
	if err := q.Exec(ctx, insertIndexSQL, kinds, items, stories, seen, starts, features, bBand, bSeen, bKind, bItem); err != nil {
		return fmt.Errorf("stories: write index: %w", err)
	}
	return nil
}
