package graph

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"

	"github.com/feedapi/feedapi/db"
)

// Batch capacities. A batch holds at most as many keys as one operation can
// ask for within the complexity budget's usual range; more keys simply make
// another batch.
const (
	briefBatchCapacity = 1000
	weekBatchCapacity  = maxPageSize
)

// weekKey asks for one page of the posts of one brief's week.
type weekKey struct {
	from, to int64 // unix seconds, [from, to)
	page     db.Page
}

// loaders batch the relation fields of one operation. They are created on
// first use, so operations without relations (every REST endpoint) pay only
// for the empty holder.
type loaders struct {
	store *db.Store
	wait  time.Duration

	briefOnce    sync.Once
	briefByDay   *dataloader.Loader[time.Time, *db.Brief]
	weekOnce     sync.Once
	postsOfWeeks *dataloader.Loader[weekKey, db.PostPage]
	latestOnce   sync.Once
	latestFlows  *dataloader.Loader[db.Asset, *db.EtfFlow]
	fundOnce     sync.Once
	funds        *dataloader.Loader[string, *db.EtfFund]
	topOnce      sync.Once
	tops         *dataloader.Loader[topFundsKey, []db.EtfFundPeriod]
	holdingsOnce sync.Once
	holding      *dataloader.Loader[db.EtfDay, *db.CoinAmount]
	stories      storyLoaders
}

type loadersKey struct{}

// loaderExtension puts an empty loaders holder into each operation's context.
type loaderExtension struct {
	store *db.Store
	wait  time.Duration
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = loaderExtension{}

func (loaderExtension) ExtensionName() string                   { return "Dataloaders" }
func (loaderExtension) Validate(graphql.ExecutableSchema) error { return nil }

func (e loaderExtension) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	return next(context.WithValue(ctx, loadersKey{}, &loaders{store: e.store, wait: e.wait}))
}

// loadersFrom returns the operation's loaders. Outside an operation set up by
// loaderExtension (which only a misconfigured executor would do) it returns
// fresh loaders, so results stay correct, only unbatched.
func (r *Resolver) loadersFrom(ctx context.Context) *loaders {
	if l, ok := ctx.Value(loadersKey{}).(*loaders); ok {
		return l
	}
	return &loaders{store: r.store, wait: r.limits.BatchWait}
}

// briefLoader returns the loader of briefs by day, created on first use.
func (l *loaders) briefLoader() *dataloader.Loader[time.Time, *db.Brief] {
	l.briefOnce.Do(func() {
		l.briefByDay = dataloader.NewBatchedLoader(l.loadBriefs,
			dataloader.WithWait[time.Time, *db.Brief](l.wait),
			dataloader.WithBatchCapacity[time.Time, *db.Brief](briefBatchCapacity))
	})
	return l.briefByDay
}

// briefOfPost returns the brief whose week holds the post's day, or nil.
func (l *loaders) briefOfPost(ctx context.Context, p *db.Post) (*db.Brief, error) {
	return l.briefLoader().Load(ctx, postDay(p))()
}

// knowBriefOfPosts records that b is the brief of posts, read as the posts
// of b's week, so that their Post.brief answers without waiting for a batch
// or querying (an internal dashboard's briefs → posts → brief).
func (l *loaders) knowBriefOfPosts(ctx context.Context, b *db.Brief, posts []db.Post) {
	loader := l.briefLoader()
	for i := range posts {
		loader.Prime(ctx, postDay(&posts[i]), b)
	}
}

// postDay is the UTC midnight of the day p was created, the key of its brief.
func postDay(p *db.Post) time.Time {
	t := p.CreatedAt.UTC()
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func (l *loaders) loadBriefs(ctx context.Context, days []time.Time) []*dataloader.Result[*db.Brief] {
	out := make([]*dataloader.Result[*db.Brief], len(days))
	briefs, err := l.store.BriefsCovering(ctx, days)
	for i, day := range days {
		out[i] = &dataloader.Result[*db.Brief]{Error: err}
		if err != nil {
			continue
		}
		for j := range briefs {
			if start, end := briefs[j].Week(); !day.Before(start) && day.Before(end) {
				out[i].Data = &briefs[j]
				break
			}
		}
	}
	return out
}

// postsOfWeek returns one page of the posts created in [from, to).
func (l *loaders) postsOfWeek(ctx context.Context, from, to time.Time, p db.Page) (db.PostPage, error) {
	l.weekOnce.Do(func() {
		l.postsOfWeeks = dataloader.NewBatchedLoader(l.loadPostsOfWeeks,
			dataloader.WithWait[weekKey, db.PostPage](l.wait),
			dataloader.WithBatchCapacity[weekKey, db.PostPage](weekBatchCapacity))
	})
	return l.postsOfWeeks.Load(ctx, weekKey{from: from.Unix(), to: to.Unix(), page: p})()
}

func (l *loaders) loadPostsOfWeeks(ctx context.Context, keys []weekKey) []*dataloader.Result[db.PostPage] {
	pages := make([]db.WeekPage, len(keys))
	for i, k := range keys {
		pages[i] = db.WeekPage{From: time.Unix(k.from, 0).UTC(), To: time.Unix(k.to, 0).UTC(), Page: k.page}
	}
	res, err := l.store.ListPostsOfWeeks(ctx, pages)
	out := make([]*dataloader.Result[db.PostPage], len(keys))
	for i := range keys {
		if err != nil {
			out[i] = &dataloader.Result[db.PostPage]{Error: err}
		} else {
			out[i] = &dataloader.Result[db.PostPage]{Data: res[i]}
		}
	}
	return out
}

// latestFlow returns the newest flow record of asset, or nil when it has none.
func (l *loaders) latestFlow(ctx context.Context, asset db.Asset) (*db.EtfFlow, error) {
	l.latestOnce.Do(func() {
		l.latestFlows = dataloader.NewBatchedLoader(l.loadLatestFlows,
			dataloader.WithWait[db.Asset, *db.EtfFlow](l.wait))
	})
	return l.latestFlows.Load(ctx, asset)()
}

func (l *loaders) loadLatestFlows(ctx context.Context, assets []db.Asset) []*dataloader.Result[*db.EtfFlow] {
	flows, err := l.store.LatestEtfFlows(ctx, db.EtfFilter{Assets: assets})
	out := make([]*dataloader.Result[*db.EtfFlow], len(assets))
	for i, a := range assets {
		out[i] = &dataloader.Result[*db.EtfFlow]{Error: err}
		for j := range flows {
			if flows[j].Asset == a {
				out[i].Data = &flows[j]
			}
		}
	}
	return out
}
