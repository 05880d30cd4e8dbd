package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/graph-gophers/dataloader/v7"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/cursor"
	"github.com/feedapi/feedapi/graph/model"
)

// The names that bind the ETF lists' cursors to them.
const (
	connEtfFlows     = "etf-flows"
	connEtfFundFlows = "etf-fund-flows"
)

// Limits of the per-fund arguments.
const (
	maxFundsFilter = 50 // tickers in etfFundFlows(funds:)
	defaultTopFund = 5  // EtfSummaryEntry.topFunds(first:)
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
	if wantsEdges(ctx) {
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
	if wantsEdges(ctx) {
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

// fundsComplete reports whether the funds' published figures of flow's day
// sum exactly to its net inflow (and at least one fund published).
func (r *Resolver) fundsComplete(ctx context.Context, flow *db.EtfFlow) (bool, error) {
	sum, err := r.loadersFrom(ctx).fundSum(ctx, db.EtfDay{Asset: flow.Asset, Day: flow.FlowDate.UTC()})
	if err != nil {
		return false, err
	}
	return sum.Funds > 0 && sum.NetInflow == flow.NetInflow, nil
}

// topFunds ranks the funds of the entry's assets over its 30-day window.
func (r *Resolver) topFunds(ctx context.Context, e *db.EtfSummaryEntry, first *int) ([]db.EtfFundPeriod, error) {
	n := defaultTopFund
	if first != nil {
		if *first < 1 || *first > maxTopFunds {
			return nil, apperr.Invalid("first", "first must be an integer from 1 to %d", maxTopFunds)
		}
		n = *first
	}
	if e.Last30Days.From == nil {
		return []db.EtfFundPeriod{}, nil
	}
	return r.store.TopEtfFunds(ctx, e.Covers, *e.Last30Days.From, e.LatestFlowDate, n)
}

// holdings sums the coins the entry's asset's funds hold; nil for the total.
func (r *Resolver) holdings(ctx context.Context, e *db.EtfSummaryEntry) (*db.CoinAmount, error) {
	if e.Asset == nil {
		return nil, nil
	}
	h, _, err := r.store.EtfHoldings(ctx, *e.Asset, e.LatestFlowDate)
	return h, err
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

// fundSum loads what the funds of an asset published for a day, batched.
func (l *loaders) fundSum(ctx context.Context, day db.EtfDay) (db.FundSum, error) {
	l.fundSumOnce.Do(func() {
		l.fundSums = dataloader.NewBatchedLoader(l.loadFundSums,
			dataloader.WithWait[db.EtfDay, db.FundSum](l.wait),
			dataloader.WithBatchCapacity[db.EtfDay, db.FundSum](maxEtfSize))
	})
	return l.fundSums.Load(ctx, day)()
}

func (l *loaders) loadFundSums(ctx context.Context, days []db.EtfDay) []*dataloader.Result[db.FundSum] {
	sums, err := l.store.EtfFundSums(ctx, days)
	out := make([]*dataloader.Result[db.FundSum], len(days))
	for i, d := range days {
		out[i] = &dataloader.Result[db.FundSum]{Data: sums[d], Error: err}
	}
	return out
}
