package story_test

import (
	"testing"

	"github.com/feedapi/feedapi/db/story"
)

// BenchmarkFeatures is the detector's CPU cost of one item: its
// features and its index keys.
func BenchmarkFeatures(b *testing.B) {
	title := "Bitcoin Tops $95,000 for First Time as ETF Demand Swells"
	body := "The largest cryptocurrency rose as much as 4% to $95,210 in Asian trading on Monday, as spot ETF inflows continued for a seventh day."
	for b.Loop() {
		f := story.Of(title, body)
		_ = f.Bands()
	}
}

// BenchmarkFeaturesLabelled is BenchmarkFeatures over the labelled
// events' items in turn: a feed's words vary from item to item, where the
// one headline above finds the same few words each time.
func BenchmarkFeaturesLabelled(b *testing.B) {
	items := readItems(b)
	i := 0
	for b.Loop() {
		it := &items[i%len(items)]
		i++
		f := story.Of(it.Title, it.Body)
		_ = f.Bands()
	}
}

// BenchmarkIndexLabelled is the detector over the labelled events'
// items, in time order, added to an empty index: their features and keys,
// the candidates each finds, and the weighing of them.
func BenchmarkIndexLabelled(b *testing.B) {
	items := readItems(b)
	features := make([]story.Features, len(items))
	for i, it := range items {
		features[i] = story.Of(it.Title, it.Body)
	}
	for b.Loop() {
		x := story.NewIndex()
		for i := range items {
			x.Add(features[i], items[i].At)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(items)), "ns/item")
}
