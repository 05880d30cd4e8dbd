package graph

import (
	"encoding/json"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/model"
)

// postArgs are the filters of the curated posts. The list (posts), its
// stream (postStream) and its subscription (postAdded) take the same
// arguments and read them here, so that a filter added to the list is a
// filter of the stream and the subscription too (TestStreamsTakeTheirListsFilters
// fails when the schema leaves one out).
type postArgs struct {
	source   *string
	since    *time.Time
	coins    []string
	q        *string
	sinceID  *int64
	collapse *model.Collapse
}

// filter checks the arguments and returns their filter.
func (a postArgs) filter() (db.PostFilter, error) {
	var f db.PostFilter
	var err error
	if f.Source, err = textArg("source", a.source); err != nil {
		return f, err
	}
	if a.since != nil {
		f.Since = sinceBound(*a.since)
	}
	f.SearchFilter, err = searchArgs(a.coins, a.q, a.sinceID)
	f.CollapseStory = collapseStory(a.collapse)
	return f, err
}

// firehoseArgs are the filters of the firehose, read alike by firehose,
// firehoseStream and firehoseMessageAdded.
type firehoseArgs struct {
	pane      *db.Pane
	source    *string
	important *bool
	since     *time.Time
	coins     []string
	q         *string
	sinceID   *int64
	collapse  *model.Collapse
}

// filter checks the arguments and returns their filter.
func (a firehoseArgs) filter() (db.FirehoseFilter, error) {
	var f db.FirehoseFilter
	var err error
	if a.pane != nil {
		f.Pane = *a.pane
	}
	if f.Source, err = textArg("source", a.source); err != nil {
		return f, err
	}
	if a.important != nil {
		f.Important = *a.important
	}
	if a.since != nil {
		f.Since = sinceBound(*a.since)
	}
	f.SearchFilter, err = searchArgs(a.coins, a.q, a.sinceID)
	f.CollapseStory = collapseStory(a.collapse)
	return f, err
}

// filterKey is the key of a filter among the groups of a live feed: equal
// filters, equal keys.
func filterKey(f any) string {
	b, err := json.Marshal(f)
	if err != nil {
		// Filters hold strings, numbers, booleans and times.
		panic(err)
	}
	return string(b)
}
