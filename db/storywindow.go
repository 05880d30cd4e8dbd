package db

import (
	"slices"
	"sort"
	"time"

	"github.com/feedapi/feedapi/db/story"
)

// A writer of many batches keeps a copy of the story index of its window
// in memory (migration 20261127100001_story_window): from its second batch
// on, a batch's candidates are found in the copy, exactly as the probe of
// story_bands would find them, and the batch's lookup statement fetches
// only what other writers indexed since the last one. A writer of one batch
// (a single item, a small import) never pays for the load: its batch is a
// probe.

// DefaultMaxWindow is how many indexed items a writer's copy of the window
// holds at most, a bound on its memory; beyond it the writer probes the
// database for each batch, as a writer of one batch does.
const DefaultMaxWindow = 200_000

// storyWindow is the copy: every indexed item seen within [from, to) and
// visible to the snapshot of the last lookup, with all its bands.
type storyWindow struct {
	members map[itemKey]*member
	bands   map[int64][]*member // each in seen_at order, ties in load order
	// from and to bound seen_at; both zero before the first load.
	from, to time.Time
	// unseen is what the last lookup's snapshot could not see.
	unseen unseen
}

// unseen are the transactions a snapshot could not see: those at or after
// xmax (not begun) and the open ones, in progress. A row visible to a later
// snapshot and not to this one was written by one of them: every other
// transaction had ended, committed and seen or rolled back.
type unseen struct {
	xmax int64
	open []int64
}

func newStoryWindow() *storyWindow {
	return &storyWindow{members: map[itemKey]*member{}, bands: map[int64][]*member{}}
}

// windowRequest is what a warm lookup fetches besides the probe's rows:
// the items written by the transactions the last lookup could not see
// (since; nil for a first load) and those of the ranges of seen_at the
// copy does not hold yet.
type windowRequest struct {
	since    *unseen
	from, to []time.Time // [from[i], to[i])
	limit    int         // rows of each range at most: one more than the copy may hold
	// held are the items the copy holds: fetched again (a transaction
	// that was open at the last lookup may have indexed them, or not),
	// they are not decoded again.
	held map[itemKey]*member
	// planned returns the member the writer planned for an item, if it
	// did lately: its features are not decoded again.
	planned func(itemKey) *member
}

// request is the lookup that brings the copy up to date for items seen
// within [from, to), and moves the copy's bounds there: what it held
// before from is forgotten once it is far behind (a writer's items move
// forward in time; one that jumps far loads afresh). planned is the
// writer's memory of its own members (windowRequest.planned).
func (w *storyWindow) request(from, to time.Time, maxItems int, planned func(itemKey) *member) windowRequest {
	req := windowRequest{since: &w.unseen, limit: maxItems + 1, held: w.members, planned: planned}
	// The copy reaches loadAhead past the batch's window, so that a writer
	// whose items move forward (the live writer, an import in time order)
	// loads a range once in a while, not with each batch.
	ahead := to.Add(loadAhead)
	switch {
	case w.from.IsZero() || !from.Before(w.to) || !to.After(w.from):
		// Nothing held overlaps: load the range afresh.
		clear(w.members)
		clear(w.bands)
		req.since = nil
		req.from, req.to = []time.Time{from}, []time.Time{ahead}
		w.from, w.to = from, ahead
		return req
	}
	if from.Before(w.from) {
		req.from, req.to = append(req.from, from), append(req.to, w.from)
		w.from = from
	} else if from.Sub(w.from) > story.Window/2 {
		w.forget(from)
		w.from = from
	}
	if to.After(w.to) {
		req.from, req.to = append(req.from, w.to), append(req.to, ahead)
		w.to = ahead
	}
	return req
}

// loadAhead is how far past a batch's window the copy loads.
const loadAhead = story.Window / 4

// add files m under its bands, unless the copy holds it or it was seen
// outside the copy's bounds (a range the copy will load when it needs it).
func (w *storyWindow) add(m *member) {
	key := itemKey{m.kind, m.id}
	if w.members[key] != nil || m.at.Before(w.from) || !m.at.Before(w.to) {
		return
	}
	w.members[key] = m
	for _, b := range m.bands {
		list := w.bands[b]
		// After the items seen at the same time: the probe's index
		// returns the latest written first among equal times. Items
		// mostly come in time order (a load reads them so, a writer
		// adds its latest), so the end of the list is looked at first.
		if len(list) == 0 || !list[len(list)-1].at.After(m.at) {
			w.bands[b] = append(list, m)
			continue
		}
		i := sort.Search(len(list), func(i int) bool { return list[i].at.After(m.at) })
		w.bands[b] = slices.Insert(list, i, m)
	}
}

// forget drops the items seen before t.
func (w *storyWindow) forget(t time.Time) {
	for key, m := range w.members {
		if !m.at.Before(t) {
			continue
		}
		delete(w.members, key)
		for _, b := range m.bands {
			list := w.bands[b]
			i := sort.Search(len(list), func(i int) bool { return !list[i].at.Before(t) })
			if i == len(list) {
				delete(w.bands, b)
			} else if i > 0 {
				w.bands[b] = slices.Delete(list, 0, i)
			}
		}
	}
}

// probe is lookupProbeSQL's probe of story_bands on the copy: of each of
// the distinct bands, the story.MaxPerBand items seen latest within
// [from, to), in byKey order.
func (w *storyWindow) probe(bands []int64, from, to time.Time) map[int64][]*member {
	bands = distinct(bands)
	found := make(map[int64][]*member, len(bands))
	// One array for every band's list: a probe allocates once.
	all := make([]*member, 0, len(bands)*story.MaxPerBand)
	for _, b := range bands {
		list := w.bands[b]
		// A writer's items are mostly the latest: then the whole list
		// is seen before to, and the search, a read of a member per
		// step, is spared.
		end := len(list)
		if end > 0 && !list[end-1].at.Before(to) {
			end = sort.Search(len(list), func(i int) bool { return !list[i].at.Before(to) })
		}
		start := end
		for start > 0 && end-start < story.MaxPerBand && !list[start-1].at.Before(from) {
			start--
		}
		if start < end {
			n := len(all)
			all = append(all, list[start:end]...)
			found[b] = all[n:len(all):len(all)]
			slices.SortFunc(found[b], byKey)
		}
	}
	return found
}
