package db

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"
)

// BriefFilter says what a list of briefs reads.
type BriefFilter struct {
	From time.Time // week_start >= From; zero: no bound
	// Omit names columns not to read ("content"): their fields stay zero.
	// Every other column of the model is read.
	Omit []string
}

// ListBriefs returns one page of weekly briefs, newest first, and whether
// more rows lie beyond it in the page's direction.
func (s *Store) ListBriefs(ctx context.Context, f BriefFilter, p Page) ([]Brief, bool, error) {
	if err := p.validate(); err != nil {
		return nil, false, fmt.Errorf("list briefs: %w", err)
	}
	q := s.briefsSQL(f, p)
	rows, sizes, err := queryRows[Brief](ctx, s, p.Limit+1, q.String(), q.args...)
	if err != nil {
		return nil, false, fmt.Errorf("list briefs: %w", err)
	}
	rows, cut, err := cutBySize(rows, sizes, p.MaxBytes, func(b *Brief) int64 { return b.ID })
	if err != nil {
		return nil, false, fmt.Errorf("list briefs: %w", err)
	}
	rows, more := trim(rows, p)
	return rows, more || cut, nil
}

// briefsSQL returns the statement of one page of briefs, read from the
// primary key in the page's direction.
func (s *Store) briefsSQL(f BriefFilter, p Page) *sqlBuilder {
	q := s.newSQL(briefType, f.Omit)
	q.add("SELECT " + q.cols("b") + " FROM briefs b WHERE true")
	if !f.From.IsZero() {
		q.add(" AND b.week_start >= ?::date", f.From.Format(time.DateOnly))
	}
	p.where(q, "b")
	p.orderLimit(q, "b")
	return s.boundBytes(q, briefType, f.Omit, nil, p.order(), p.MaxBytes)
}

// GetBrief returns the brief with the given id, or ErrNotFound.
func (s *Store) GetBrief(ctx context.Context, id int64) (*Brief, error) {
	b := new(Brief)
	if err := s.db.NewSelect().Model(b).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, fmt.Errorf("get brief %d: %w", id, notFound(err))
	}
	return b, nil
}

// BriefsCovering returns the briefs whose week holds at least one of the
// given days (UTC calendar days; the time of day is ignored), ordered by
// week_start. One statement whatever the number of days.
func (s *Store) BriefsCovering(ctx context.Context, days []time.Time) ([]Brief, error) {
	if len(days) == 0 {
		return nil, nil
	}
	dates := make([]string, len(days))
	for i, d := range days {
		dates[i] = d.UTC().Format(time.DateOnly)
	}
	var rows []Brief
	err := s.db.NewSelect().Model(&rows).
		Where("EXISTS (SELECT 1 FROM unnest(?::date[]) AS d(day) WHERE d.day BETWEEN brief.week_start AND brief.week_end)",
			pgdialect.Array(dates)).
		Order("week_start").
		Scan(ctx)
	if err != nil {
		return nil, fmt.Errorf("briefs covering %d days: %w", len(days), err)
	}
	return rows, nil
}

// Week returns the half-open interval [start, end) of created_at that the
// brief's week spans: from Monday 00:00 UTC to the day after week_end.
func (b *Brief) Week() (start, end time.Time) {
	start = time.Date(b.WeekStart.Year(), b.WeekStart.Month(), b.WeekStart.Day(), 0, 0, 0, 0, time.UTC)
	end = time.Date(b.WeekEnd.Year(), b.WeekEnd.Month(), b.WeekEnd.Day()+1, 0, 0, 0, 0, time.UTC)
	return start, end
}
