package db

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"
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
	q := s.firehoseQuery(&rows, f)
	if err := p.apply(q, "").Scan(ctx); err != nil {
		return nil, false, fmt.Errorf("list firehose: %w", err)
	}
	rows, more := trim(rows, p)
	return rows, more, nil
}

// firehoseQuery selects the messages matching f into dst, without paging.
func (s *Store) firehoseQuery(dst *[]FirehoseMessage, f FirehoseFilter) *bun.SelectQuery {
	q := s.db.NewSelect().Model(dst)
	if f.Pane != "" {
		q = q.Where("pane = ?", f.Pane)
	}
	if f.Source != "" {
		// ILIKE with the default escape character (backslash); the trigram
		// GIN index serves it for substrings of three or more characters.
		q = q.Where("source ILIKE ?", ContainsPattern(f.Source))
	}
	if f.Important {
		q = q.Where("important")
	}
	if !f.Since.IsZero() {
		q = q.Where("created_at >= ?", clampTime(f.Since))
	}
	return q
}
