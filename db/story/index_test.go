package story

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// TestIndexAddPicksAsPick: the in-memory index assigns every item the story
// that Pick chooses among the candidates a band probe returns (the most
// recent MaxPerBand items of each of the item's bands, each item once, in
// band order), as the database's probe does, over a stream dense enough
// that bands overflow and with Forget on the way.
func TestIndexAddPicksAsPick(t *testing.T) {
	titles := []string{
		"SEC approves spot Solana ETFs from six issuers",
		"Spot Solana ETFs win SEC approval",
		"SEC delays decision on spot Solana ETFs to March",
		"Bitcoin tops $95,000 for first time as ETF demand swells",
		"Bitcoin falls below $90,000 as ETF outflows mount",
		"Ethereum ETFs see $512M inflows",
		"Ethereum ETFs see $87M outflows",
		"Coinbase lists new token after surge in volume",
	}
	x := NewIndex()
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	added, joined, overflow := 0, 0, false
	for i := range 3000 {
		title := titles[i%len(titles)]
		if i%3 == 0 {
			// Templated headlines: a story each, sharing bands.
			title = fmt.Sprintf("Ethereum ETFs see $%dM inflows", 100+i)
		}
		body := fmt.Sprintf("Report %d of the day: %s, traders said on desk %d.", i%37, title, i%11)
		at := start.Add(time.Duration(i) * 3 * time.Minute)
		f := Of(title, body)

		// The probe, as the database's: candidates gathered first.
		var cands []Candidate
		seen := map[int]bool{}
		for _, b := range f.Bands() {
			list := x.bands[b]
			overflow = overflow || len(list) > MaxPerBand
			for _, m := range list[max(0, len(list)-MaxPerBand):] {
				if !seen[m] {
					seen[m] = true
					c := x.members[m].Candidate
					c.Start = x.starts[c.Story]
					cands = append(cands, c)
				}
			}
		}
		want, ok := Pick(f, at, cands)
		next := x.Next()
		got := x.Add(f, at)
		if !ok {
			want = next
		} else {
			joined++
		}
		if got != want {
			t.Fatalf("item %d: Add gave story %d, Pick over the probe's %d candidates %d", i, got, len(cands), want)
		}
		added++
		if i%500 == 499 {
			x.Forget(at.Add(-Window))
		}
	}
	if joined < added/4 || joined == added || !overflow {
		t.Errorf("%d of %d items joined a story, a band overflowed: %v; the stream does not exercise every case", joined, added, overflow)
	}
}

// TestContradictPairByPair: contradict, which tests every pair of opposite
// words at once, agrees with the rule read pair by pair (one item says the
// first word and not the second, the other the second and not the first).
func TestContradictPairByPair(t *testing.T) {
	if 2*len(opposites) > 64 {
		t.Fatalf("%d pairs of opposite words do not fit a stance's 64 bits", len(opposites))
	}
	byPair := func(a, b uint64) bool {
		for i := range opposites {
			x, y := uint64(1)<<(2*i), uint64(1)<<(2*i+1)
			if (a&x != 0 && a&y == 0 && b&y != 0 && b&x == 0) || (a&y != 0 && a&x == 0 && b&x != 0 && b&y == 0) {
				return true
			}
		}
		return false
	}
	rng := rand.New(rand.NewPCG(1, 2))
	mask := uint64(1)<<(2*len(opposites)) - 1
	for range 200_000 {
		// Sparse stances, as headlines have: a few words each.
		a, b := rng.Uint64()&rng.Uint64()&rng.Uint64()&mask, rng.Uint64()&rng.Uint64()&rng.Uint64()&mask
		if got, want := contradict(a, b), byPair(a, b); got != want {
			t.Fatalf("contradict(%b, %b) = %v, want %v", a, b, got, want)
		}
	}
}
