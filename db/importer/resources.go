package importer

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
)

// Kind names the resource a file holds, as the import command spells it.
type Kind string

// The kinds of import file.
const (
	KindPosts    Kind = "posts"
	KindBriefs   Kind = "briefs"
	KindFirehose Kind = "firehose"
	KindEtfFlows Kind = "etf-flows"
)

// ParseKind returns the Kind named s.
func ParseKind(s string) (Kind, error) {
	switch k := Kind(s); k {
	case KindPosts, KindBriefs, KindFirehose, KindEtfFlows:
		return k, nil
	}
	return "", fmt.Errorf("unknown import kind %q: want posts, briefs, firehose or etf-flows", s)
}

// resource describes how lines of one kind become rows of its table.
type resource[T any, K comparable] struct {
	kind Kind
	// parse validates one line; the error is a *fieldError.
	parse func(*object) (T, error)
	// key is the row's primary key, to keep one row per key in a batch.
	key func(*T) K
	// conflicts, when set, finds the rows of a batch that the database would
	// refuse for a reason other than their key, by index into rows.
	conflicts func(ctx context.Context, tx bun.Tx, rows []T) (map[int]*fieldError, error)
}

// Each validator reads the fields in the order of the resource's REST form,
// so the first problem reported is the first in that order.

func parsePost(o *object) (db.Post, error) {
	p := db.Post{
		ID:                o.id("id"),
		Source:            o.text("source"),
		Username:          o.text("username"),
		Body:              o.text("body"),
		URL:               o.url("url"),
		OriginalSourceURL: o.url("original_source_url"),
		CreatedAt:         o.timestamp("created_at"),
		Raw:               o.jsonObject("raw"),
	}
	return p, o.err()
}

func parseBrief(o *object) (db.Brief, error) {
	b := db.Brief{
		ID:        o.id("id"),
		WeekStart: o.date("week_start"),
		WeekEnd:   o.date("week_end"),
		PostCount: o.count("post_count"),
		Content:   o.text("content"),
		CreatedAt: o.timestamp("created_at"),
	}
	o.check(!b.WeekEnd.Before(b.WeekStart), "week_end", "must not be before week_start")
	return b, o.err()
}

func parseFirehose(o *object) (db.FirehoseMessage, error) {
	m := db.FirehoseMessage{
		ID:                o.id("id"),
		Pane:              o.pane("pane"),
		Source:            o.text("source"),
		SourceName:        o.optText("source_name"),
		Name:              o.optText("name"),
		Username:          o.optText("username"),
		Title:             o.optText("title"),
		Body:              o.optText("body"),
		SummaryAI:         o.optText("summary_ai"),
		Important:         o.boolean("important"),
		URL:               o.url("url"),
		OriginalSourceURL: o.url("original_source_url"),
		CreatedAt:         o.timestamp("created_at"),
	}
	return m, o.err()
}

func parseEtfFlow(o *object) (db.EtfFlow, error) {
	f := db.EtfFlow{
		Asset:        o.asset("asset"),
		FlowDate:     o.date("flow_date"),
		NetInflow:    o.money("net_inflow"),
		CumNetInflow: o.money("cum_net_inflow"),
		NetAssets:    o.money("net_assets"),
		ValueTraded:  o.money("value_traded"),
		UpdatedAt:    o.timestamp("updated_at"),
	}
	return f, o.err()
}

// etfKey is the primary key of an ETF flow record.
type etfKey struct {
	asset db.Asset
	day   time.Time
}

// weekConflicts enforces briefs' unique week_start, which the upsert by id
// cannot resolve: a brief is refused when its week already belongs to another
// brief, earlier in the batch or in the database. The database check is
// conservative: a week is taken by its current holder even if the same batch
// moves that brief to another week.
func weekConflicts(ctx context.Context, tx bun.Tx, rows []db.Brief) (map[int]*fieldError, error) {
	weeks := make([]string, len(rows))
	for i := range rows {
		weeks[i] = rows[i].WeekStart.Format(time.DateOnly)
	}
	var held []struct {
		ID        int64
		WeekStart time.Time
	}
	if err := tx.NewSelect().Table("briefs").Column("id", "week_start").
		Where("week_start IN (?)", bun.List(weeks)).Scan(ctx, &held); err != nil {
		return nil, fmt.Errorf("look up brief weeks: %w", err)
	}
	holder := make(map[string]int64, len(rows)+len(held))
	for _, h := range held {
		holder[h.WeekStart.Format(time.DateOnly)] = h.ID
	}
	bad := map[int]*fieldError{}
	for i, b := range rows {
		if id, ok := holder[weeks[i]]; ok && id != b.ID {
			bad[i] = &fieldError{"week_start", weeks[i] + " already belongs to brief " + strconv.FormatInt(id, 10)}
			continue
		}
		holder[weeks[i]] = b.ID
	}
	return bad, nil
}
