package pollcache

import (
	"testing"
	"time"

	"github.com/feedapi/feedapi/rest/contract"
)

// TestInvalidatedDuringQuery: a page read by a query that started
// before an invalidation is not stored.
func TestInvalidatedDuringQuery(t *testing.T) {
	t.Parallel()
	c := New(time.Minute)
	gen, started := c.Generation(contract.PollPosts), c.Now()
	c.Invalidate(contract.PollPosts)
	c.Put("k", contract.PollPosts, gen, started, []byte("{}"), nil, "t")
	if c.Get("k") != nil {
		t.Error("a page read before an invalidation was stored")
	}
	c.Put("k", contract.PollPosts, c.Generation(contract.PollPosts), started, []byte("{}"), nil, "t")
	if c.Get("k") == nil {
		t.Error("a page read after it was not")
	}
	c.Invalidate(contract.PollFirehose)
	if c.Get("k") == nil {
		t.Error("invalidating the firehose dropped a posts page")
	}
	var off *Cache
	off.Invalidate(contract.PollPosts) // a nil cache is off, and safe
	if New(0) != nil {
		t.Error("New(0) is not off")
	}
}
