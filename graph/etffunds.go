package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/graph-gophers/dataloader/v7"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/graph/limits"
	"github.com/feedapi/feedapi/graph/model"
)

// The names that bind the ETF lists' cursors to them.
const (
	connEtfFlows     = "etf-flows"
	connEtfFundFlows = "etf-fund-flows"
)

// Limits of the per-fund arguments.
const (
	maxFundsFilter = limits.MaxFunds // tickers in etfFundFlows(funds:)
	defaultTopFund = 5               // EtfSummaryEntry.topFunds(first:)
	maxTopFunds    = 50
)

// etfRange checks an ETF date range; from after to is refused.
func etfRange(from, to *time.Time) (lo, hi time.Time, err error) {
	if from != nil {
		lo = *from
	}
	if to != nil {
		hi = *to
	}
	if from != nil && to != nil && from.After(*to) {
		return lo, hi, apperr.Invalid("from", "from must not be after to")
	}
	return lo, hi, nil
}

// etfPosition turns the store's refusal of a position into the error of a
// bad cursor: it passed the cursor's check, so only a cursor of the same
// connection forged or from another version can carry it.
func etfPosition(err error) error {
	if errors.Is(err, db.ErrBadPosition) {
		return cursor.Invalid()
	}
	return err
}

func (r *Resolver) etfFlowsConnection(ctx context.Context, assets []db.Asset, from, to *time.Time, args pageArgs) (*model.EtfFlowConnection, error) {
	p, err := args.sizedPage(connEtfFlows, defaultEtfSize, maxEtfSize)
	if err != nil {
		return nil, err
	}
	f := db.EtfFilter{Assets: assets}
	if f.From, f.To, err = etfRange(from, to); err != nil {
		return nil, err
	}
	rows, more, err := r.store.ListEtfFlowsPage(ctx, f, p)
	if err != nil {
		return nil, etfPosition(err)
	}
	key := func(i int) int64 { return db.EtfFlowKey(rows[i].Asset, rows[i].FlowDate) }
	c := &model.EtfFlowConnection{
		Nodes:    rows,
		PageInfo: pageInfo(connEtfFlows, p, len(rows), func() int64 { return key(0) }, func() int64 { return key(len(rows) - 1) }, more),
	}
	if selects(ctx, "edges") {
		c.Edges = make([]model.EtfFlowEdge, len(rows))
		for i := range rows {
			c.Edges[i] = model.EtfFlowEdge{Cursor: cursor.Encode(connEtfFlows, key(i)), Node: &rows[i]}
		}
	}
	return c, nil
}

func (r *Resolver) etfFundFlows(ctx context.Context, assets []db.Asset, funds []string, from, to *time.Time, args pageArgs) (*model.EtfFundFlowConnection, error) {
	p, err := args.sizedPage(connEtfFundFlows, defaultEtfSize, maxEtfSize)
	if err != nil {
		return nil, err
	}
	f := db.EtfFundFilter{Assets: assets}
	if f.From, f.To, err = etfRange(from, to); err != nil {
		return nil, err
	}
	if f.Tickers, err = r.fundsArg(ctx, funds); err != nil {
		return nil, err
	}
	rows, more, err := r.store.ListEtfFundFlows(ctx, f, p)
	if err != nil {
		return nil, etfPosition(err)
	}
	key := func(i int) int64 { return db.EtfFundFlowKey(rows[i].Asset, rows[i].Ticker, rows[i].FlowDate) }
	c := &model.EtfFundFlowConnection{
		Nodes:    rows,
		PageInfo: pageInfo(connEtfFundFlows, p, len(rows), func() int64 { return key(0) }, func() int64 { return key(len(rows) - 1) }, more),
	}
	if selects(ctx, "edges") {
		c.Edges = make([]model.EtfFundFlowEdge, len(rows))
		for i := range rows {
			c.Edges[i] = model.EtfFundFlowEdge{Cursor: cursor.Encode(connEtfFundFlows, key(i)), Node: &rows[i]}
		}
	}
	return c, nil
}

// fundsArg checks the funds filter: at most maxFundsFilter tickers, each a
// fund's, in any case. A ticker that is no fund is refused rather than
// matching nothing, so that a misspelt filter never reads as "no flows".
func (r *Resolver) fundsArg(ctx context.Context, funds []string) ([]string, error) {
	if len(funds) == 0 {
		return nil, nil
	}
	if len(funds) > maxFundsFilter {
		return nil, apperr.Invalid("funds", "funds must list at most %d tickers", maxFundsFilter)
	}
	tickers := make([]string, 0, len(funds))
	for _, t := range funds {
		t = strings.ToUpper(strings.TrimSpace(t))
		if !db.ValidTicker(t) {
			return nil, apperr.Invalid("funds", "funds must be fund tickers (1 to 7 letters or digits), got %q", t)
		}
		if !slices.Contains(tickers, t) {
			tickers = append(tickers, t)
		}
	}
	known, err := r.store.EtfFundsByTicker(ctx, tickers)
	if err != nil {
		return nil, err
	}
	for _, t := range tickers {
		if !slices.ContainsFunc(known, func(f db.EtfFund) bool { return f.Ticker == t }) {
			return nil, apperr.Invalid("funds", "funds: %s is not a fund; etfFunds lists them", t)
		}
	}
	return tickers, nil
}

// fundTickers lists the funds' tickers sorted, as discovery shows them.
func (r *Resolver) fundTickers(ctx context.Context) ([]string, error) {
	funds, err := r.store.ListEtfFunds(ctx, nil)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(funds))
	for i, f := range funds {
		out[i] = f.Ticker
	}
	slices.Sort(out)
	return out, nil
}

// etfSummary summarises the flows and, when the operation shows the funds'
// figures of its entries, reads them for every entry at once (two
// statements, without a loader's batch wait).
func (r *Resolver) etfSummary(ctx context.Context, assets []db.Asset) (*db.EtfSummary, error) {
	sum, err := r.store.SummarizeEtfFlows(ctx, db.EtfFilter{Assets: assets})
	if err != nil || sum == nil {
		return sum, err
	}
	if top, ok := fundFiguresShown(ctx); ok {
		if err := r.store.FillEtfFunds(ctx, sum, top); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// fundFiguresShown reports whether the etfSummary field being resolved
// shows topFunds or holdings of its entries, and the largest topFunds
// asked for (a valid first, else the default; a bad one is refused by
// topFunds itself).
func fundFiguresShown(ctx context.Context) (top int, shown bool) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || !graphql.HasOperationContext(ctx) {
		return 0, false
	}
	opCtx := graphql.GetOperationContext(ctx)
	top = defaultTopFund
	for _, entry := range graphql.CollectFields(opCtx, fc.Field.Selections, nil) {
		if entry.Name != "total" && entry.Name != "assets" {
			continue
		}
		for _, f := range graphql.CollectFields(opCtx, entry.Selections, nil) {
			switch f.Name {
			case "holdings":
				shown = true
			case "topFunds":
				shown = true
				if n, ok := f.ArgumentMap(opCtx.Variables)["first"].(int64); ok && n >= 1 && n <= maxTopFunds {
					top = max(top, int(n))
				}
			}
		}
	}
	return top, shown
}

// topFunds ranks the funds of the entry's assets over its 30-day window;
// the entries of an operation are answered by one statement.
func (r *Resolver) topFunds(ctx context.Context, e *db.EtfSummaryEntry, first *int) ([]db.EtfFundPeriod, error) {
	n := defaultTopFund
	if first != nil {
		if *first < 1 || *first > maxTopFunds {
			return nil, apperr.Invalid("first", "first must be an integer from 1 to %d", maxTopFunds)
		}
		n = *first
	}
	if e.Funds != nil && n <= e.Funds.TopLimit { // read with the summary
		return e.Funds.Top[:min(n, len(e.Funds.Top))], nil
	}
	if e.Last30Days.From == nil {
		return []db.EtfFundPeriod{}, nil
	}
	names := make([]string, len(e.Covers))
	for i, a := range e.Covers {
		names[i] = string(a)
	}
	return r.loadersFrom(ctx).topFunds(ctx, topFundsKey{
		assets: strings.Join(names, ","), from: *e.Last30Days.From, to: e.LatestFlowDate, n: n,
	})
}

// holdings sums the coins the entry's asset's funds hold; nil for the
// total. The entries of an operation are answered by one statement.
func (r *Resolver) holdings(ctx context.Context, e *db.EtfSummaryEntry) (*db.CoinAmount, error) {
	if e.Asset == nil {
		return nil, nil
	}
	if e.Funds != nil { // read with the summary
		return e.Funds.Holdings, nil
	}
	return r.loadersFrom(ctx).holdings(ctx, db.EtfDay{Asset: *e.Asset, Day: e.LatestFlowDate})
}

// fund returns the fund of a figure through the operation's loader.
func (r *Resolver) fund(ctx context.Context, flow *db.EtfFundFlow) (*db.EtfFund, error) {
	return r.loadersFrom(ctx).fund(ctx, flow.Ticker)
}

// fund loads funds by ticker, batched.
func (l *loaders) fund(ctx context.Context, ticker string) (*db.EtfFund, error) {
	l.fundOnce.Do(func() {
		l.funds = dataloader.NewBatchedLoader(l.loadFunds,
			dataloader.WithWait[string, *db.EtfFund](l.wait),
			dataloader.WithBatchCapacity[string, *db.EtfFund](maxEtfSize))
	})
	return l.funds.Load(ctx, ticker)()
}

func (l *loaders) loadFunds(ctx context.Context, tickers []string) []*dataloader.Result[*db.EtfFund] {
	funds, err := l.store.EtfFundsByTicker(ctx, tickers)
	out := make([]*dataloader.Result[*db.EtfFund], len(tickers))
	for i, t := range tickers {
		out[i] = &dataloader.Result[*db.EtfFund]{Error: err}
		if j := slices.IndexFunc(funds, func(f db.EtfFund) bool { return f.Ticker == t }); j >= 0 {
			out[i].Data = &funds[j]
		} else if err == nil {
			out[i].Error = fmt.Errorf("fund %s: %w", t, db.ErrNotFound)
		}
	}
	return out
}

// topFundsKey asks for the top n funds of the assets (comma-separated)
// over the days from..to.
type topFundsKey struct {
	assets   string
	from, to time.Time
	n        int
}

// topFunds loads top funds, batched.
func (l *loaders) topFunds(ctx context.Context, key topFundsKey) ([]db.EtfFundPeriod, error) {
	l.topOnce.Do(func() {
		l.tops = dataloader.NewBatchedLoader(l.loadTopFunds, dataloader.WithWait[topFundsKey, []db.EtfFundPeriod](l.wait))
	})
	return l.tops.Load(ctx, key)()
}

func (l *loaders) loadTopFunds(ctx context.Context, keys []topFundsKey) []*dataloader.Result[[]db.EtfFundPeriod] {
	qs := make([]db.TopFundsQuery, len(keys))
	for i, k := range keys {
		var assets []db.Asset
		for a := range strings.SplitSeq(k.assets, ",") {
			assets = append(assets, db.Asset(a))
		}
		qs[i] = db.TopFundsQuery{Assets: assets, From: k.from, To: k.to, Limit: k.n}
	}
	tops, err := l.store.TopEtfFunds(ctx, qs)
	out := make([]*dataloader.Result[[]db.EtfFundPeriod], len(keys))
	for i := range keys {
		out[i] = &dataloader.Result[[]db.EtfFundPeriod]{Error: err}
		if err == nil {
			out[i].Data = tops[i]
		}
	}
	return out
}

// holdings loads the coins an asset's funds hold on a day, batched.
func (l *loaders) holdings(ctx context.Context, day db.EtfDay) (*db.CoinAmount, error) {
	l.holdingsOnce.Do(func() {
		l.holding = dataloader.NewBatchedLoader(l.loadHoldings, dataloader.WithWait[db.EtfDay, *db.CoinAmount](l.wait))
	})
	return l.holding.Load(ctx, day)()
}

func (l *loaders) loadHoldings(ctx context.Context, days []db.EtfDay) []*dataloader.Result[*db.CoinAmount] {
	h, err := l.store.EtfHoldings(ctx, days)
	out := make([]*dataloader.Result[*db.CoinAmount], len(days))
	for i := range days {
		out[i] = &dataloader.Result[*db.CoinAmount]{Error: err}
		if err == nil {
			out[i].Data = h[i]
		}
	}
	return out
}
