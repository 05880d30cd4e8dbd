package story

import (
	"time"
)

// Candidate is an item already in a story, as an index probe returns it.
type Candidate struct {
	Story    int64
	Features Features
	At       time.Time
}

// Pick returns the story of the candidate that tells the same story as an
// item with features f seen at t, the most similar one when several do;
// ok is false when none does (the item starts a story).
func Pick(f Features, t time.Time, candidates []Candidate) (story int64, ok bool) {
	best := -1.0
	for _, c := range candidates {
		if d := t.Sub(c.At); d > Window || d < -Window {
			continue
		}
		if !Same(f, c.Features) {
			continue
		}
		if s := Score(f, c.Features); s > best {
			best, story, ok = s, c.Story, true
		}
	}
	return story, ok
}

// MembersIndexed is how many items of a story have their bands indexed:
// enough for a story's rewordings to be found by the words of any of its
// first items, while a story with hundreds of echoes costs no more than a
// few.
const MembersIndexed = 4

// Index is an in-memory index of bands, the model of the database's
// story_bands table: the labelled set's test and the benchmarks use it.
// It is not safe for concurrent use.
type Index struct {
	bands   map[int64][]int // band → members
	members []member
	sizes   map[int64]int
	next    int64
}

type member struct {
	Candidate
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{bands: map[int64][]int{}, sizes: map[int64]int{}, next: 1}
}

// Add assigns an item to a story, indexing its bands, and returns the
// story's id.
func (x *Index) Add(f Features, t time.Time) int64 {
	bands := f.Bands()
	var cands []Candidate
	seen := map[int]bool{}
	for _, b := range bands {
		for _, m := range x.bands[b] {
			if !seen[m] {
				seen[m] = true
				cands = append(cands, x.members[m].Candidate)
			}
		}
	}
	id, ok := Pick(f, t, cands)
	if !ok {
		id = x.next
		x.next++
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
