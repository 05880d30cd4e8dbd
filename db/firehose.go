package db

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FirehoseFilter narrows the firehose. Zero fields do not filter.
type FirehoseFilter struct {
	Pane      Pane      // exact pane
	Source    string    // case-insensitive substring of source; % and _ are literal
	Important bool      // only messages flagged important (false: no filter)
	Since     time.Time // created_at >= Since
	// Omit names columns not to read ("summary_ai", "body"): their fields
	// stay zero. Every other column of the model is read.
	Omit []string
	SearchFilter
}

// likeEscaper escapes LIKE's wildcards and its escape character.
var likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)

// ContainsPattern returns an ILIKE pattern that matches s literally as a substring.
func ContainsPattern(s string) string { return "%" + likeEscaper.Replace(s) + "%" }

// ListFirehose returns one page of firehose messages, newest first, and
// whether more rows lie beyond it in the page's direction.
func (s *Store) ListFirehose(ctx context.Context, f FirehoseFilter, p Page) ([]FirehoseMessage, bool, error) {
	if err := p.validate(); err != nil {
		return nil, false, fmt.Errorf("list firehose: %w", err)
	}
	windows, err := s.firehoseWindows(ctx, p, f.SinceID, f.Since)
	if err != nil {
		return nil, false, fmt.Errorf("list firehose: %w", err)
	}
	if windows.empty() {
		return []FirehoseMessage{}, false, nil
	}
	fromOldest, err := s.sinceFromOldest(ctx, f.Since)
	if err != nil {
		return nil, false, fmt.Errorf("list firehose: %w", err)
	}
	f.collapse()
	var rows []FirehoseMessage
	var sizes []sized
	for w, done := windows.first(), false; !done; {
		g := f
		g.window = w
		q := s.firehosePageSQL(g, p, fromOldest)
		rows, sizes, err = queryRows[FirehoseMessage](ctx, s, p.Limit+1, q.String(), q.args...)
		if err != nil {
			return nil, false, fmt.Errorf("list firehose: %w", err)
		}
		full := len(rows) > p.Limit || (p.MaxBytes > 0 && len(sizes) > 0 && sizes[len(sizes)-1].sum > p.MaxBytes)
		var last int64
		if len(rows) > 0 {
			last = rows[len(rows)-1].ID
		}
		w, done = windows.next(w, full, last)
	}
	rows, cut, err := cutBySize(rows, sizes, p.MaxBytes, messageID)
	if err != nil {
		return nil, false, fmt.Errorf("list firehose: %w", err)
	}
	rows, more := trim(rows, p)
	return rows, more || cut, nil
}

func messageID(m *FirehoseMessage) int64 { return m.ID }

// firehosePageSQL writes the statement of one read of a page of f (f.window
// set, collapse prepared) within its byte budget; fromOldest is
// sinceFromOldest's answer for f.Since.
func (s *Store) firehosePageSQL(f FirehoseFilter, p Page, fromOldest bool) *sqlBuilder {
	q := s.newSQL(firehoseType, f.Omit)
	q.sinceFromOldest = fromOldest
	firehoseSQL(q, f, p)
	return s.boundBytes(q, firehoseType, f.Omit, nil, p.order(), p.MaxBytes)
}

// collapse prepares CollapseStory: a sibling message must match the
// filters.
func (f *FirehoseFilter) collapse() {
	g := *f
	f.SearchFilter.collapse("firehose_messages", func(q *sqlBuilder, alias string) {
		if g.Pane != "" {
			q.add(" AND "+alias+".pane = ?", string(g.Pane))
		}
		if g.Important {
			q.add(" AND " + alias + ".important")
		}
		if g.Source != "" {
			q.add(" AND "+alias+".source ILIKE ?", ContainsPattern(g.Source))
		}
		if !g.Since.IsZero() {
			q.add(" AND "+alias+".created_at >= ?", clampTime(g.Since))
		}
	})
}

// firehoseSQL writes the statement of one page of the firehose, in one of
// three shapes (db/QUERIES.md shows their plans):
//
//   - no source: the page straight from the index that orders the filter by
//     id: (pane, id), (pane, id) WHERE important, (id) WHERE important or
//     the primary key, each scanned in the page's direction;
//   - source: see firehoseBySource;
//   - since: either of the above behind the recent-rows gate of sinceSQL;
//
// with several coins, one such statement per ticker (coinBranches).
func firehoseSQL(q *sqlBuilder, f FirehoseFilter, p Page) {
	if coinBranches(q, f.SearchFilter, p, func(s SearchFilter) {
		b := f
		b.SearchFilter = s
		firehoseSQL(q, b, p)
	}) {
		return
	}
	if f.Since.IsZero() || q.sinceFromOldest {
		firehoseByID(q, f, p, f.Since)
		return
	}
	sinceSQL(q, "firehose_messages", f.Since, p, func(q *sqlBuilder, alias string) {
		if f.Pane != "" {
			q.add(" AND "+alias+".pane = ?", string(f.Pane))
		}
		if f.Important {
			q.add(" AND " + alias + ".important")
		}
		if f.Source != "" {
			q.add(" AND "+alias+".source ILIKE ?", ContainsPattern(f.Source))
		}
		f.SearchFilter.where(q, alias)
		f.SearchFilter.coins(q, alias, firehoseCoins, p)
	}, func(q *sqlBuilder) { firehoseByID(q, f, p, f.Since) })
}

// firehoseByID writes the page of f in id order, reading the index that
// holds the filter's rows in id order. A non-zero since is checked on each
// row (not through the created_at index): see sinceSQL.
func firehoseByID(q *sqlBuilder, f FirehoseFilter, p Page, since time.Time) {
	if f.Source == "" {
		q.add("SELECT " + q.cols("m") + " FROM firehose_messages m WHERE true")
		if f.Pane != "" {
			q.add(" AND m.pane = ?", string(f.Pane))
		}
		if f.Important {
			q.add(" AND m.important")
		}
		f.SearchFilter.where(q, "m")
		f.SearchFilter.coins(q, "m", firehoseCoins, p)
		p.where(q, "m")
		sinceFilter(q, "m", since)
		p.orderLimit(q, "m")
		return
	}
	firehoseBySource(q, f, p, since)
}

// sourceGroupsFew is how many (source, pane, important) groups matching a
// source substring firehoseBySource reads one by one without first trying
// the id-order walk.
const sourceGroupsFew = 128

// sourceWalkRows is how many rows of the filter's id order the walk of
// firehoseBySource reads at most.
const sourceWalkRows = 10_000

// firehoseBySource writes the page of f, whose Source is set, in id order.
// The groups whose source matches come from firehose_source_groups (one
// row per distinct source, pane and important flag, kept by triggers),
// through its trigram index for substrings of three characters or more.
// Then one of two plans runs, so that the cost follows the matches, never
// the number of sources:
//
//   - at most sourceGroupsFew groups match (a rare or absent substring, or
//     any substring while there are few sources): each group's page is read
//     newest first from firehose_source_pane_important_id_idx
//     (index-only), the page's ids are picked from that merge (a top-N sort
//     of at most groups × (limit+1) ids) and the rows fetched by id;
//   - more groups match (a common substring among many sources): the
//     filter's own id order (the primary key or a pane index) is walked
//     for at most sourceWalkRows rows, testing the substring on each. When
//     that fills the page, or reads every row left, the walk is the
//     page; otherwise (many groups with few recent rows) the groups'
//     pages are merged as above.
//
// The gates are initplans of one statement: only the plan chosen runs.
func firehoseBySource(q *sqlBuilder, f FirehoseFilter, p Page, since time.Time) {
	few, walk := sourceGroupsFew, sourceWalkRows
	if q.sourceGroups > 0 {
		few = q.sourceGroups
	}
	if q.sourceWalk > 0 {
		walk = q.sourceWalk
	}
	pattern := ContainsPattern(f.Source)
	groupFilter := func() {
		// source ILIKE pattern, as PostgreSQL computes it in UTF-8.
		q.add("g.source_lower LIKE lower(?)", pattern)
		if f.Pane != "" {
			q.add(" AND g.pane = ?", string(f.Pane))
		}
		if f.Important {
			q.add(" AND g.important")
		}
	}
	// rowFilter writes the filters other than the source on alias, in the
	// page's range.
	rowFilter := func(alias string) {
		q.add("SELECT " + q.cols(alias) + " FROM firehose_messages " + alias + " WHERE true")
		if f.Pane != "" {
			q.add(" AND "+alias+".pane = ?", string(f.Pane))
		}
		if f.Important {
			q.add(" AND " + alias + ".important")
		}
		f.SearchFilter.where(q, alias)
		f.SearchFilter.coins(q, alias, firehoseCoins, p)
		p.where(q, alias)
		sinceFilter(q, alias, since)
		p.orderBy(q, alias)
		q.add(" LIMIT " + strconv.Itoa(walk))
	}
	walkChosen := "CASE WHEN (SELECT yes FROM few) THEN false ELSE (SELECT yes FROM done) END"

	// The limit is on the scan of sg, not in it: planned with a limit, the
	// lookup would rather read the groups table in order and hope to meet
	// few+1 matches early than use the trigram index.
	q.add("WITH sg AS MATERIALIZED (\n\tSELECT g.source, g.pane, g.important FROM firehose_source_groups g WHERE ")
	groupFilter()
	q.add("\n),\nfew AS MATERIALIZED (SELECT count(*) <= " + strconv.Itoa(few) +
		" AS yes FROM (SELECT 1 FROM sg LIMIT " + strconv.Itoa(few+1) + ") c),\n")
	q.add("walk AS MATERIALIZED (\n\tSELECT w.* FROM (")
	rowFilter("m")
	q.add(") w WHERE w.source ILIKE ?", pattern)
	p.orderLimit(q, "w")
	q.add("\n),\ndone AS MATERIALIZED (SELECT CASE WHEN (SELECT count(*) FROM walk) > " + strconv.Itoa(p.Limit) +
		" THEN true ELSE (SELECT count(*) FROM (")
	rowFilter("c")
	q.add(") c) < " + strconv.Itoa(walk) + " END AS yes),\n")
	q.add("groups AS (\n\tSELECT source, pane, important FROM sg WHERE (SELECT yes FROM few)\n\tUNION ALL\n" +
		"\tSELECT g.source, g.pane, g.important FROM firehose_source_groups g WHERE " +
		"CASE WHEN (SELECT yes FROM few) THEN false ELSE NOT (SELECT yes FROM done) END AND ")
	groupFilter()
	q.add(`
),
ids AS (
	SELECT x.id FROM groups g CROSS JOIN LATERAL (
		SELECT x.id FROM firehose_messages x
		WHERE x.source = g.source AND x.pane = g.pane AND x.important = g.important`)
	f.SearchFilter.where(q, "x")
	f.SearchFilter.coins(q, "x", firehoseCoins, p)
	p.where(q, "x")
	sinceFilter(q, "x", since)
	p.orderLimit(q, "x")
	q.add(") x")
	p.orderLimit(q, "x")
	q.add("\n)\nSELECT u.* FROM (\n\t(SELECT " + q.cols("m") + " FROM firehose_messages m WHERE m.id IN (SELECT id FROM ids)")
	f.window.write(q, "m")
	q.add(")\n\tUNION ALL\n\t(SELECT w.* FROM walk w WHERE " + walkChosen + ")\n) u")
	p.orderBy(q, "u")
}
