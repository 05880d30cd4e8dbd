package db

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
)

// Scanning the rows of the list and stream statements. bun's generic scan
// puts a reflective scanner in front of every column of every row; for the
// statements every poll runs, that scan cost more CPU than the rest of the
// request's handling together (an end-to-end CPU profile). These statements
// still go through bun (bun.DB.QueryContext formats them and runs the
// query hooks), but their rows are scanned straight into the model's
// fields: scanTarget names the destination of each column, with the
// database/sql conversions that need no reflection.
//
// A column of the model that scanTarget does not know is an error, not a
// silent zero: TestScanTargetsCoverTheModels checks every bun field of
// Post and FirehoseMessage.

// rowModel is a model whose rows queryRows can scan.
type rowModel[T any] interface {
	*T
	// scanTarget returns where column col of a row goes, or nil for a
	// column the model does not have.
	scanTarget(col string) any
}

// queryRows runs the bun-formatted statement query with args and returns
// its rows; capHint is the number of rows expected (the page's limit + 1).
// A statement that boundBytes wrapped gives the sizes of its rows too (nil
// otherwise).
func queryRows[T any, P rowModel[T]](ctx context.Context, s *Store, capHint int, query string, args ...any) ([]T, []sized, error) {
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, nil, err
	}
	out := make([]T, 0, capHint)
	var sizes []sized
	if slices.Contains(cols, "_sum") {
		sizes = make([]sized, 0, capHint)
	}
	targets := make([]any, len(cols))
	for rows.Next() {
		out = append(out, *new(T))
		row := P(&out[len(out)-1])
		if sizes != nil {
			sizes = append(sizes, sized{})
		}
		for i, c := range cols {
			switch c {
			case "_bytes":
				targets[i] = &sizes[len(sizes)-1].bytes
			case "_sum":
				targets[i] = &sizes[len(sizes)-1].sum
			default:
				if targets[i] = row.scanTarget(c); targets[i] == nil {
					return nil, nil, fmt.Errorf("scan %T: no field for column %q", row, c)
				}
			}
		}
		if err := rows.Scan(targets...); err != nil {
			return nil, nil, err
		}
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return out, sizes, nil
}

func (p *Post) scanTarget(col string) any {
	switch col {
	case "id":
		return &p.ID
	case "source":
		return &p.Source
	case "username":
		return &p.Username
	case "body":
		return &p.Body
	case "url":
		return nullString{&p.URL}
	case "original_source_url":
		return nullString{&p.OriginalSourceURL}
	case "raw":
		return jsonColumn{&p.Raw}
	case "created_at":
		return &p.CreatedAt
	case "coins":
		return textArray{&p.Coins}
	case "stream_pos":
		return &p.StreamPos
	case "story_id":
		return nullInt64{&p.StoryID}
	case "received_at":
		return nullTime{&p.ReceivedAt}
	case "updated_at":
		return nullTime{&p.UpdatedAt}
	case "redelivery":
		return &p.Redelivery
	}
	return nil
}

func (m *FirehoseMessage) scanTarget(col string) any {
	switch col {
	case "id":
		return &m.ID
	case "pane":
		return paneColumn{&m.Pane}
	case "source":
		return &m.Source
	case "source_name":
		return nullString{&m.SourceName}
	case "name":
		return nullString{&m.Name}
	case "username":
		return nullString{&m.Username}
	case "title":
		return nullString{&m.Title}
	case "body":
		return nullString{&m.Body}
	case "summary_ai":
		return nullString{&m.SummaryAI}
	case "important":
		return &m.Important
	case "url":
		return nullString{&m.URL}
	case "original_source_url":
		return nullString{&m.OriginalSourceURL}
	case "created_at":
		return &m.CreatedAt
	case "coins":
		return textArray{&m.Coins}
	case "stream_pos":
		return &m.StreamPos
	case "story_id":
		return nullInt64{&m.StoryID}
	case "received_at":
		return nullTime{&m.ReceivedAt}
	case "updated_at":
		return nullTime{&m.UpdatedAt}
	case "redelivery":
		return &m.Redelivery
	}
	return nil
}

func (b *Brief) scanTarget(col string) any {
	switch col {
	case "id":
		return &b.ID
	case "week_start":
		return &b.WeekStart
	case "week_end":
		return &b.WeekEnd
	case "post_count":
		return &b.PostCount
	case "content":
		return &b.Content
	case "created_at":
		return &b.CreatedAt
	}
	return nil
}

// The column scanners below are one pointer each, so that putting one in
// an interface allocates nothing.

// nullString scans a nullable text column into a *string (nil for NULL).
type nullString struct{ p **string }

func (n nullString) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n.p = nil
	case string:
		*n.p = &v
	case []byte:
		s := string(v)
		*n.p = &s
	default:
		return fmt.Errorf("scan %T into a nullable string", src)
	}
	return nil
}

// nullInt64 scans a nullable bigint column into a *int64 (nil for NULL).
type nullInt64 struct{ p **int64 }

func (n nullInt64) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n.p = nil
	case int64:
		*n.p = &v
	default:
		return fmt.Errorf("scan %T into a nullable bigint", src)
	}
	return nil
}

// nullTime scans a nullable timestamptz column into a *time.Time (nil for
// NULL), as the driver gives it (as bun's scan would).
type nullTime struct{ p **time.Time }

func (n nullTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*n.p = nil
	case time.Time:
		*n.p = &v
	default:
		return fmt.Errorf("scan %T into a nullable time", src)
	}
	return nil
}

// jsonColumn scans a json or jsonb column into a json.RawMessage of its
// own (the driver's buffer is reused for the next row).
type jsonColumn struct{ p *json.RawMessage }

func (j jsonColumn) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		*j.p = nil
	case []byte:
		*j.p = append(json.RawMessage(nil), v...)
	case string:
		*j.p = json.RawMessage(v)
	default:
		return fmt.Errorf("scan %T into JSON", src)
	}
	return nil
}

// paneColumn scans the pane enum.
type paneColumn struct{ p *Pane }

func (c paneColumn) Scan(src any) error {
	switch v := src.(type) {
	case string:
		*c.p = Pane(v)
	case []byte:
		*c.p = Pane(v)
	default:
		return fmt.Errorf("scan %T into a pane", src)
	}
	return nil
}

// textArray scans a text[] column (the driver hands over its text form,
// e.g. {BTC,ETH}) into a []string; NULL gives nil, {} an empty slice, as
// bun's array scan does. Elements with quotes or escapes (never a ticker)
// are left to pgx's array parser.
type textArray struct{ p *[]string }

func (a textArray) Scan(src any) error {
	var s string
	switch v := src.(type) {
	case nil:
		*a.p = nil
		return nil
	case string:
		s = v
	case []byte:
		s = string(v)
	default:
		return fmt.Errorf("scan %T into a text array", src)
	}
	if len(s) < 2 || s[0] != '{' || s[len(s)-1] != '}' || strings.ContainsAny(s, `"\`) {
		return pgtype.NewMap().SQLScanner(a.p).Scan(src)
	}
	body := s[1 : len(s)-1]
	if body == "" {
		*a.p = []string{}
		return nil
	}
	out := strings.Split(body, ",")
	for _, e := range out {
		if e == "NULL" {
			return pgtype.NewMap().SQLScanner(a.p).Scan(src)
		}
	}
	*a.p = out
	return nil
}

var (
	_ sql.Scanner = nullString{}
	_ sql.Scanner = jsonColumn{}
	_ sql.Scanner = paneColumn{}
	_ sql.Scanner = textArray{}
)
