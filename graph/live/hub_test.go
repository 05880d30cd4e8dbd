package live

import (
	"context"
	"testing"
	"time"
)

// TestHubNeverLosesAChange: a consumer that takes Wait's channel before it
// reads is woken by any later change, and Subscribe coalesces changes per
// kind, marking those after a resync.
func TestHubNeverLosesAChange(t *testing.T) {
	h := NewHub()
	wait := h.Wait(KindPosts)
	g := h.Generation()
	h.Publish(KindFirehose)
	select {
	case <-wait:
		t.Fatal("a change of firehose woke a posts waiter")
	default:
	}
	h.Publish(KindPosts)
	select {
	case <-wait:
	default:
		t.Fatal("a change of posts did not wake its waiter")
	}
	if h.Generation() != g+2 {
		t.Errorf("generation %d after two changes from %d", h.Generation(), g)
	}
	if h.Wait("unknown") != nil {
		t.Error("an unknown kind has a channel")
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sub := h.Subscribe(ctx)
	next := func() Change {
		t.Helper()
		select {
		case c := <-sub:
			return c
		case <-time.After(30 * time.Second):
			t.Fatal("no change within 30 s")
		}
		return Change{}
	}
	// Three changes of posts before the consumer reads: one Change.
	h.Publish(KindPosts)
	h.Publish(KindPosts)
	h.Publish(KindPosts)
	if c := next(); c != (Change{Kind: KindPosts}) {
		t.Errorf("got %+v, want one posts change", c)
	}
	h.Resync()
	seen := map[string]bool{}
	for range Kinds {
		c := next()
		if !c.Resync {
			t.Errorf("change %+v after a resync is not marked", c)
		}
		seen[c.Kind] = true
	}
	if len(seen) != len(Kinds) {
		t.Errorf("a resync changed %v, want every kind", seen)
	}
	h.Publish(KindBriefs)
	if c := next(); c != (Change{Kind: KindBriefs}) {
		t.Errorf("got %+v after the resync, want a plain briefs change", c)
	}
	cancel()
	for range sub {
	}
}
