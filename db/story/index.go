package story

import (
	"time"
)

// Candidate is an item already in a story, as an index probe returns it.
type Candidate struct {
	Story    int64
	Features Features
	At       time.Time
	// Start is when the candidate's story began: a story takes items
	// within Window of its first one, so that a chain of echoes does not
	// stretch it over a week.
	Start time.Time
}

// Pick returns the story of the candidate that tells the same story as an
// item with features f seen at t, the most similar one when several do;
// ok is false when none does (the item starts a story).
func Pick(f Features, t time.Time, candidates []Candidate) (story int64, ok bool) {
	p := NewPicker(f, t)
	for i := range candidates {
		c := &candidates[i]
		p.Consider(c.Story, &c.Features, c.At, c.Start)
	}
	return p.Story()
}

// Picker applies Pick's rule to one candidate at a time, so that an index
// need not gather its candidates first: between candidates of equal score
// the first considered wins.
type Picker struct {
	f Features
	// from and to bound the times within Window of the item's: compared
	// with Before and After, which cost less than a Sub for each
	// candidate.
	from, to time.Time
	best     float64
	story    int64
	ok       bool
}

// NewPicker picks the story of an item with features f seen at t.
func NewPicker(f Features, t time.Time) Picker {
	return Picker{f: f, from: t.Add(-Window), to: t.Add(Window), best: -1}
}

// Consider weighs a candidate of story, seen at at, whose story began at
// start.
func (p *Picker) Consider(story int64, cf *Features, at, start time.Time) {
	if at.Before(p.from) || at.After(p.to) || start.Before(p.from) || start.After(p.to) {
		return
	}
	same, s := match(&p.f, cf)
	if !same {
		return
	}
	if s > p.best {
		p.best, p.story, p.ok = s, story, true
	}
}

// Story is the story picked so far; ok is false while no candidate tells
// the same story.
func (p *Picker) Story() (story int64, ok bool) { return p.story, p.ok }

// MaxPerBand is how many items of one band a lookup reads at most, the
// most recent: a band shared by many items (a templated headline) costs
// no more than a rare one.
const MaxPerBand = 16

// MembersIndexed is how many items of a story have their bands indexed:
// enough for a story's rewordings to be found by the words of any of its
// first items, while a story with hundreds of echoes costs no more than a
// few.
const MembersIndexed = 2

// Index is an in-memory index of bands, the model of the database's
// story_bands table: the labelled set's test and the benchmarks use it.
// It is not safe for concurrent use.
type Index struct {
	bands   map[int64][]int // band → members
	members []member
	sizes   map[int64]int
	starts  map[int64]time.Time
	next    int64
	// seen[m] == adds when member m was already considered by the
	// current Add (a member shares several bands with an item); a stamp
	// rather than a set, so that Add allocates nothing per candidate.
	seen []uint64
	adds uint64
}

type member struct {
	Candidate
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{bands: map[int64][]int{}, sizes: map[int64]int{}, starts: map[int64]time.Time{}, next: 1}
}

// Add assigns an item to a story, indexing its bands, and returns the
// story's id.
func (x *Index) Add(f Features, t time.Time) int64 {
	bands := f.Bands()
	x.adds++
	if n := len(x.members); len(x.seen) < n {
		x.seen = append(x.seen, make([]uint64, n-len(x.seen))...)
	}
	p := NewPicker(f, t)
	for _, b := range bands {
		list := x.bands[b]
		list = list[max(0, len(list)-MaxPerBand):] // the most recent
		for _, m := range list {
			if x.seen[m] != x.adds {
				x.seen[m] = x.adds
				c := &x.members[m].Candidate
				p.Consider(c.Story, &c.Features, c.At, x.starts[c.Story])
			}
		}
	}
	id, ok := p.Story()
	if !ok {
		id = x.next
		x.next++
		x.starts[id] = t
	} else if t.Before(x.starts[id]) {
		x.starts[id] = t
	}
	x.sizes[id]++
	if x.sizes[id] <= MembersIndexed {
		x.members = append(x.members, member{Candidate{Story: id, Features: f, At: t}})
		for _, b := range bands {
			x.bands[b] = append(x.bands[b], len(x.members)-1)
		}
	}
	return id
}

// NewIndexAt returns an empty index whose first new story is first.
func NewIndexAt(first int64) *Index {
	x := NewIndex()
	x.next = first
	return x
}

// Next is the id the next new story will get.
func (x *Index) Next() int64 { return x.next }

// Forget drops the items seen before t (older than the window of any item
// still to come, when items come in time order), so that an index fed a
// long stream holds only a window of it.
func (x *Index) Forget(t time.Time) {
	kept := x.members[:0]
	sizes := map[int64]int{}
	starts := map[int64]time.Time{}
	for _, m := range x.members {
		if !m.At.Before(t) {
			kept = append(kept, m)
			sizes[m.Story] = x.sizes[m.Story]
			starts[m.Story] = x.starts[m.Story]
		}
	}
	x.members = kept
	x.sizes, x.starts = sizes, starts
	x.bands = map[int64][]int{}
	for i, m := range x.members {
		for _, b := range m.Features.Bands() {
			x.bands[b] = append(x.bands[b], i)
		}
	}
}

// Size is the number of items whose bands the index holds.
func (x *Index) Size() int { return len(x.members) }

// Start is when story s began, as far as the index knows.
func (x *Index) Start(s int64) time.Time { return x.starts[s] }
