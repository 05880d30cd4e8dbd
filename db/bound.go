package db

import (
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Reads bounded by size. A page holds at most its limit of rows, but rows
// have no size limit of their own that a page could be sized by: one raw
// payload may be a megabyte. A read given a byte budget (Page.MaxBytes,
// StreamRange.MaxBytes) adds up, in the database and in the read's order,
// the long texts of its rows (textColumns: those a list reads only when
// they are shown, measured as the API writes them), and returns rows only
// while the total stays within the budget: the rows beyond are neither
// sent by PostgreSQL nor held by the process, and the read reports more
// rows, so that its caller ends the page early with a cursor that goes on
// from its last row. A first row that alone is over the budget cannot be
// served whole: the read returns a *TooLargeError for it, without having
// read its texts.

// textColumn is a long text column of a model, with the SQL expression
// (on the alias %[1]s) of the bytes the API writes for it: octet_length of
// a text reads the stored length without detoasting the value (no cost);
// raw's JSON text has to be written out to be measured (costly: about as
// much work as sending it). mask is what a row over the budget reads
// instead of the column.
type textColumn struct {
	name, measure, mask string
	costly              bool
}

// textColumns are the long texts of each model that a bounded read counts.
// They are the columns the lists leave unread unless shown (graph's
// optional columns), so that what a read counts is what the response
// shows.
var textColumns = map[reflect.Type][]textColumn{
	postType: {
		{"raw", "octet_length(%[1]s.raw::text)", "'{}'::jsonb", true},
		{"body", "octet_length(%[1]s.body)", "''", false},
	},
	firehoseType: {
		{"summary_ai", "coalesce(octet_length(%[1]s.summary_ai), 0)", "NULL", false},
		{"body", "coalesce(octet_length(%[1]s.body), 0)", "NULL", false},
	},
	briefType: {
		{"content", "octet_length(%[1]s.content)", "''", false},
	},
}

// TextBytes returns the bytes of the post's long texts that a bounded read
// counts: raw as JSON text and body, as far as they were read.
func (p *Post) TextBytes() int64 { return int64(len(p.Raw) + len(p.Body)) }

// TextBytes returns the bytes of the message's long texts that a bounded
// read counts: summary_ai and body, as far as they were read.
func (m *FirehoseMessage) TextBytes() int64 {
	n := 0
	if m.SummaryAI != nil {
		n += len(*m.SummaryAI)
	}
	if m.Body != nil {
		n += len(*m.Body)
	}
	return int64(n)
}

// TextBytes returns the bytes of the brief's long text that a bounded read
// counts: its content, if it was read.
func (b *Brief) TextBytes() int64 { return int64(len(b.Content)) }

// TooLargeError is the error of a read bounded by MaxBytes whose first row
// alone has more bytes of long texts than that.
type TooLargeError struct {
	ID    int64 // the row's id
	Bytes int64 // the bytes of its long texts
	Max   int64 // the read's MaxBytes
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("row %d has %d bytes of long texts, more than the %d the read may hold", e.ID, e.Bytes, e.Max)
}

// boundBytes returns q, a statement over model reading every column but
// omit, and then the columns extra, in the order order (a column and
// direction, e.g. "id DESC"), wrapped so that it returns its rows only
// while their long texts add up to at most max, and the first row beyond
// that, if any, with its long texts replaced by their masks: the caller
// tells it by its running total. Each row ends with _bytes (its long
// texts' bytes) and _sum (the running total up to it). Without a budget
// (max <= 0), or with no long text read, q is returned as it is.
//
// When the measures cost nothing (text columns), a window adds them up
// over the page's rows. When one is costly (raw), a recursive walk
// measures the rows one by one and stops at the first beyond the budget,
// so that the work, like what is sent, follows the budget and not the
// page's limit: a page of a hundred payloads of a megabyte measures five,
// not a hundred.
func (s *Store) boundBytes(q *sqlBuilder, model reflect.Type, omit, extra []string, order string, max int64) *sqlBuilder {
	var measure []string
	masked := map[string]string{}
	costly := false
	for _, c := range textColumns[model] {
		if slices.Contains(omit, c.name) {
			continue
		}
		measure = append(measure, fmt.Sprintf(c.measure, "y"))
		masked[c.name] = c.mask
		costly = costly || c.costly
	}
	if max <= 0 || len(measure) == 0 {
		return q
	}
	m := strconv.FormatInt(max, 10)
	// cols is the select list: the columns of the rows (alias row), the
	// long ones masked beyond the budget, then the sizes (alias w).
	cols := func(row string) string {
		var b strings.Builder
		for i, c := range strings.Split(s.columns(model, "", omit), ", ") {
			if i > 0 {
				b.WriteString(", ")
			}
			if mask, ok := masked[strings.Trim(c, `"`)]; ok {
				b.WriteString("CASE WHEN w._sum <= " + m + " THEN " + row + "." + c + " ELSE " + mask + " END AS " + c)
			} else {
				b.WriteString(row + "." + c)
			}
		}
		for _, c := range extra {
			b.WriteString(", " + row + "." + c)
		}
		return b.String() + ", w._bytes, w._sum"
	}
	sum := strings.Join(measure, " + ")
	out := &sqlBuilder{boundWindow: q.boundWindow, sourceGroups: q.sourceGroups, sourceWalk: q.sourceWalk, columns: q.columns}
	if !costly {
		out.add("SELECT " + cols("w") + " FROM (SELECT y.*, b._bytes, sum(b._bytes) OVER (ORDER BY y." + order +
			" ROWS UNBOUNDED PRECEDING) AS _sum FROM (\n")
		out.add(q.String(), q.args...)
		out.add("\n) y CROSS JOIN LATERAL (SELECT " + sum + " AS _bytes) b) w WHERE w._sum - w._bytes <= " + m +
			" ORDER BY w." + order)
		return out
	}
	// The rows stay as read (long values not fetched) until sent; each step
	// measures the next row while the total so far is within the budget.
	out.add("WITH RECURSIVE rows AS MATERIALIZED (SELECT z.*, row_number() OVER (ORDER BY z." + order + ") AS _n FROM (\n")
	out.add(q.String(), q.args...)
	out.add("\n) z),\nsizes AS (SELECT y._n, b._bytes, b._bytes AS _sum FROM rows y" +
		" CROSS JOIN LATERAL (SELECT (" + sum + ")::bigint AS _bytes) b WHERE y._n = 1\n" +
		"UNION ALL\nSELECT y._n, b._bytes, w._sum + b._bytes FROM sizes w" +
		" CROSS JOIN LATERAL (SELECT * FROM rows r WHERE r._n = w._n + 1 LIMIT 1) y" +
		" CROSS JOIN LATERAL (SELECT (" + sum + ")::bigint AS _bytes) b WHERE w._sum <= " + m + ")\n")
	out.add("SELECT " + cols("y") + " FROM rows y JOIN sizes w ON w._n = y._n ORDER BY y._n")
	return out
}

// sized is what a bounded statement adds to each row.
type sized struct {
	bytes, sum int64
}

// cutBySize drops the last of rows when it is the marker of a bounded read
// (its running total over max) and reports whether it did; a marker that
// is the only row is the first row alone over the budget: a
// *TooLargeError. id returns a row's id.
func cutBySize[T any](rows []T, sizes []sized, max int64, id func(*T) int64) ([]T, bool, error) {
	n := len(rows)
	if max <= 0 || n == 0 || len(sizes) != n || sizes[n-1].sum <= max {
		return rows, false, nil
	}
	if n == 1 {
		return nil, false, &TooLargeError{ID: id(&rows[0]), Bytes: sizes[0].bytes, Max: max}
	}
	return rows[:n-1], true, nil
}
