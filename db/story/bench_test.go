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
