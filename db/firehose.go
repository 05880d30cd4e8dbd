package db

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// FirehoseFilter narrows the firehose. Zero fields do not filter.
type FirehoseFilter struct {
	Pane      Pane      // exact pane
	Source    string    // case-insensitive substring of source; % and _ are literal
	Important bool      // only messages flagged important (false: no filter)
	Since     time.Time // created_at >= Since
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
	var rows []FirehoseMessage
	q := s.newSQL()
	firehoseSQL(q, f, p)
	if err := s.db.NewRaw(q.String(), q.args...).Scan(ctx, &rows); err != nil {
		return nil, false, fmt.Errorf("list firehose: %w", err)
	}
	rows, more := trim(rows, p)
	return rows, more, nil
}

// firehoseSQL writes the statement of one page of the firehose, in one of
// three shapes (db/QUERIES.md shows their plans):
//
//   - no source: the page straight from the index that orders the filter by
//     id: (pane, id), (pane, id) WHERE important, (id) WHERE important or
//     the primary key, each scanned in the page's direction;
//   - source: a loose index scan of firehose_source_pane_important_id_idx
//     lists the distinct (source, pane, important) groups, a few dozen,
//     those matching the substring (and pane, important) are kept, each is
//     read from the same index in id order up to the page size, and the
//     page's ids are picked from that merge before the rows are fetched;
//   - since: either of the above behind the recent-rows gate of sinceSQL.
func firehoseSQL(q *sqlBuilder, f FirehoseFilter, p Page) {
	if f.Since.IsZero() {
		firehoseByID(q, f, p, time.Time{})
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
	}, func(q *sqlBuilder) { firehoseByID(q, f, p, f.Since) })
}

// firehoseByID writes the page of f in id order, reading the index that
// holds the filter's rows in id order. A non-zero since is checked on each
// row (not through the created_at index): see sinceSQL.
func firehoseByID(q *sqlBuilder, f FirehoseFilter, p Page, since time.Time) {
	if f.Source == "" {
		q.add("SELECT m.* FROM firehose_messages m WHERE true")
		if f.Pane != "" {
			q.add(" AND m.pane = ?", string(f.Pane))
		}
		if f.Important {
			q.add(" AND m.important")
		}
		p.where(q, "m")
		sinceFilter(q, "m", since)
		p.orderLimit(q, "m")
		return
	}
	// The groups CTE walks the distinct (source, pane, important) triples:
	// each step is one probe of the index for the next larger triple.
	q.add(`WITH RECURSIVE groups AS (
	(SELECT source, pane, important FROM firehose_messages ORDER BY source, pane, important LIMIT 1)
	UNION ALL
	SELECT n.source, n.pane, n.important FROM groups g CROSS JOIN LATERAL (
		SELECT source, pane, important FROM firehose_messages x
		WHERE (x.source, x.pane, x.important) > (g.source, g.pane, g.important)
		ORDER BY source, pane, important LIMIT 1) n
), ids AS (
	SELECT x.id FROM groups g CROSS JOIN LATERAL (
		SELECT x.id FROM firehose_messages x
		WHERE x.source = g.source AND x.pane = g.pane AND x.important = g.important`)
	p.where(q, "x")
	sinceFilter(q, "x", since)
	p.orderLimit(q, "x")
	q.add(") x WHERE g.source ILIKE ?", ContainsPattern(f.Source))
	if f.Pane != "" {
		q.add(" AND g.pane = ?", string(f.Pane))
	}
	if f.Important {
		q.add(" AND g.important")
	}
	p.orderLimit(q, "x")
	q.add(`
)
SELECT m.* FROM firehose_messages m WHERE m.id IN (SELECT id FROM ids)`)
	p.orderBy(q, "m")
}
