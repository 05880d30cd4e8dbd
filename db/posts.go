package db

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// PostFilter narrows the curated feed. Zero fields do not filter.
type PostFilter struct {
	Source string    // exact source label
	Since  time.Time // created_at >= Since
	// Omit names columns not to read ("raw", "body"): their fields stay
	// zero. Every other column of the model is read.
	Omit []string
	SearchFilter
}

// ListPosts returns one page of curated posts, newest first, and whether
// more rows lie beyond it in the page's direction.
func (s *Store) ListPosts(ctx context.Context, f PostFilter, p Page) ([]Post, bool, error) {
	if err := p.validate(); err != nil {
		return nil, false, fmt.Errorf("list posts: %w", err)
	}
	q := s.newSQL(postType, f.Omit)
	f.collapse()
	postsSQL(q, f, p)
	q = s.boundBytes(q, postType, f.Omit, nil, p.order(), p.MaxBytes)
	rows, sizes, err := queryRows[Post](ctx, s, p.Limit+1, q.String(), q.args...)
	if err != nil {
		return nil, false, fmt.Errorf("list posts: %w", err)
	}
	rows, cut, err := cutBySize(rows, sizes, p.MaxBytes, postID)
	if err != nil {
		return nil, false, fmt.Errorf("list posts: %w", err)
	}
	rows, more := trim(rows, p)
	return rows, more || cut, nil
}

func postID(p *Post) int64 { return p.ID }

// collapse prepares CollapseStory: a sibling post must match the filters.
func (f *PostFilter) collapse() {
	g := *f
	f.SearchFilter.collapse("posts", func(q *sqlBuilder, alias string) {
		if g.Source != "" {
			q.add(" AND "+alias+".source = ?", g.Source)
		}
		if !g.Since.IsZero() {
			q.add(" AND "+alias+".created_at >= ?", clampTime(g.Since))
		}
	})
}

// postsSQL writes the statement of one page of curated posts: read in id
// order from posts_source_id_idx (with a source) or the primary key, and
// with a since bound behind the recent-rows gate of sinceSQL; with several
// coins, one such statement per ticker (coinBranches).
func postsSQL(q *sqlBuilder, f PostFilter, p Page) {
	if coinBranches(q, f.SearchFilter, p, func(s SearchFilter) {
		b := f
		b.SearchFilter = s
		postsSQL(q, b, p)
	}) {
		return
	}
	byID := func(q *sqlBuilder) {
		q.add("SELECT " + q.cols("p") + " FROM posts p WHERE true")
		if f.Source != "" {
			q.add(" AND p.source = ?", f.Source)
		}
		f.SearchFilter.where(q, "p")
		f.SearchFilter.coins(q, "p", postCoins, p)
		p.where(q, "p")
		sinceFilter(q, "p", f.Since)
		p.orderLimit(q, "p")
	}
	if f.Since.IsZero() {
		byID(q)
		return
	}
	sinceSQL(q, "posts", f.Since, p, func(q *sqlBuilder, alias string) {
		if f.Source != "" {
			q.add(" AND "+alias+".source = ?", f.Source)
		}
		f.SearchFilter.where(q, alias)
		f.SearchFilter.coins(q, alias, postCoins, p)
	}, byID)
}

// GetPost returns the post with the given id, or ErrNotFound.
func (s *Store) GetPost(ctx context.Context, id int64) (*Post, error) {
	p := new(Post)
	if err := s.db.NewSelect().Model(p).Where("id = ?", id).Scan(ctx); err != nil {
		return nil, fmt.Errorf("get post %d: %w", id, notFound(err))
	}
	return p, nil
}

// CuratedSources returns the distinct source labels of the curated posts,
// sorted. It walks posts_source_id_idx as a loose index scan (one index
// probe per distinct label), so its cost grows with the number of labels,
// not of posts.
func (s *Store) CuratedSources(ctx context.Context) ([]string, error) {
	var sources []string
	err := s.db.NewRaw(curatedSourcesSQL).Scan(ctx, &sources)
	if err != nil {
		return nil, fmt.Errorf("curated sources: %w", err)
	}
	return sources, nil
}

// curatedSourcesSQL walks the distinct sources in posts_source_id_idx: each
// step is one index probe for the next larger label.
const curatedSourcesSQL = `
	WITH RECURSIVE s(source) AS (
		(SELECT source FROM posts ORDER BY source LIMIT 1)
		UNION ALL
		SELECT (SELECT p.source FROM posts p WHERE p.source > s.source ORDER BY p.source LIMIT 1)
		FROM s WHERE s.source IS NOT NULL
	)
	SELECT source FROM s WHERE source IS NOT NULL ORDER BY source COLLATE "C"`

// WeekPage asks for one page of the curated posts created in the half-open
// interval [From, To), the week of a brief.
type WeekPage struct {
	From, To time.Time
	Page     Page
}

// PostPage is one page of posts, newest first, and whether more rows lie
// beyond it in the page's direction.
type PostPage struct {
	Posts []Post
	More  bool
}

// weekPostsSQL reads pages of the posts of whole ISO weeks (w.lo is a
// Monday 00:00 UTC) from posts_week_id_idx: each page is one index range,
// read in id order. Arguments: indexes, week starts, keyset bounds, the
// comparison ("<>" with bounds of 0 where no page has a bound), the order,
// the limit+1 and the order. %[1]s is the model's columns on alias p
// (weekSQL): not p.*, which holds columns the model lacks (fts).
const weekPostsSQL = `
	SELECT w.idx, p.*
	FROM unnest(?::int[], ?::timestamptz[], ?::bigint[]) AS w(idx, lo, bound)
	CROSS JOIN LATERAL (
		SELECT %[1]s FROM posts p
		WHERE date_trunc('week', p.created_at AT TIME ZONE 'UTC') = (w.lo AT TIME ZONE 'UTC')
			AND p.id ? w.bound
		ORDER BY p.id ?
		LIMIT ?
	) p
	ORDER BY w.idx, p.id ?`

// rangePostsSQL reads pages of the posts of arbitrary intervals [w.lo,
// w.hi), for briefs whose week is not an ISO week: the primary key is read
// in id order and filtered by created_at. Arguments: indexes, starts, ends,
// keyset bounds (0: none), the comparison, the order, the limit+1 and the
// order.
const rangePostsSQL = `
	SELECT w.idx, p.*
	FROM unnest(?::int[], ?::timestamptz[], ?::timestamptz[], ?::bigint[]) AS w(idx, lo, hi, bound)
	CROSS JOIN LATERAL (
		SELECT %[1]s FROM posts p
		WHERE p.created_at >= w.lo AND p.created_at < w.hi
			AND (w.bound = 0 OR p.id ? w.bound)
		ORDER BY p.id ?
		LIMIT ?
	) p
	ORDER BY w.idx, p.id ?`

// weekSQL returns weekPostsSQL or rangePostsSQL reading the columns of
// the Post model.
func (s *Store) weekSQL(tmpl string) string {
	return fmt.Sprintf(tmpl, s.columns(postType, "p", nil))
}

// isISOWeek reports whether [from, to) is exactly one ISO week: from a
// Monday 00:00 UTC to the next.
func isISOWeek(from, to time.Time) bool {
	from, to = from.UTC(), to.UTC()
	return from.Weekday() == time.Monday && from.Equal(from.Truncate(24*time.Hour)) &&
		to.Equal(from.AddDate(0, 0, 7))
}

// weekPost is a post tagged with the index of the WeekPage it answers.
type weekPost struct {
	Idx  int `bun:"idx"`
	Post `bun:",extend"`
}

// ListPostsOfWeeks answers many WeekPages at once: one statement per distinct
// (limit, direction) among them (normally exactly one), a LATERAL join of the
// weeks against posts. Results are in the order of pages.
func (s *Store) ListPostsOfWeeks(ctx context.Context, pages []WeekPage) ([]PostPage, error) {
	type group struct {
		limit    int
		backward bool
		isoWeek  bool // every page of the group spans one ISO week
		bounded  bool // every page of the group has a keyset bound
	}
	groups := map[group][]int{}
	var order []group
	for i, wp := range pages {
		if err := wp.Page.validate(); err != nil {
			return nil, fmt.Errorf("list posts of weeks: %w", err)
		}
		_, _, b := wp.Page.dir()
		g := group{wp.Page.Limit, wp.Page.Backward, isISOWeek(wp.From, wp.To), b > 0}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	out := make([]PostPage, len(pages))
	for _, g := range order {
		idxs := groups[g]
		from := make([]time.Time, len(idxs))
		to := make([]time.Time, len(idxs))
		bound := make([]int64, len(idxs))
		for j, i := range idxs {
			from[j], to[j] = pages[i].From, pages[i].To
			if g.backward {
				bound[j] = pages[i].Page.Before
			} else {
				bound[j] = pages[i].Page.After
			}
		}
		// Both fragments are constants; values only ever travel as arguments.
		cmp, dir := bun.Safe("<"), bun.Safe("DESC")
		if g.backward {
			cmp, dir = bun.Safe(">"), bun.Safe("ASC")
		}
		var rows []weekPost
		var err error
		if g.isoWeek {
			// Without a bound, every id passes "id <> 0" (ids are positive).
			if !g.bounded {
				cmp = bun.Safe("<>")
			}
			err = s.db.NewRaw(s.weekSQL(weekPostsSQL),
				pgdialect.Array(idxs), pgdialect.Array(from), pgdialect.Array(bound),
				cmp, dir, g.limit+1, dir,
			).Scan(ctx, &rows)
		} else {
			err = s.db.NewRaw(s.weekSQL(rangePostsSQL),
				pgdialect.Array(idxs), pgdialect.Array(from), pgdialect.Array(to), pgdialect.Array(bound),
				cmp, dir, g.limit+1, dir,
			).Scan(ctx, &rows)
		}
		if err != nil {
			return nil, fmt.Errorf("list posts of weeks: %w", err)
		}
		for _, r := range rows {
			out[r.Idx].Posts = append(out[r.Idx].Posts, r.Post)
		}
		p := Page{Limit: g.limit, Backward: g.backward}
		for _, i := range idxs {
			out[i].Posts, out[i].More = trim(out[i].Posts, p)
		}
	}
	return out, nil
}
