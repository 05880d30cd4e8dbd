package seed

import (
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/feedapi/feedapi/db"
)

// Arrival times of the demo data. A live writer's rows get received_at from
// the database's clock when they are written (the column's default); the
// seed writes months of items at once, so that clock would give every row
// the time of seeding. The seed writes received_at itself instead: created_at
// plus a delay drawn as real feeds deliver, per source: a wire release or a
// Telegram channel within seconds, an account's tweet in a few seconds,
// a news site's article in tens of seconds to minutes, a company blog in
// minutes. Each source has its own typical delay around its kind's, so
// that /v1/sources tells fast sources from slow ones.

// streamReceived drives the delays, apart from the generators' own
// streams, so that the other columns do not change with it.
const streamReceived = 0x7265637600000000

// delayProfile is a kind of source's delay: log-normal around median.
type delayProfile struct {
	median time.Duration
	sigma  float64
}

var (
	// Telegram channels of the curated posts: pushed within seconds.
	postDelay = delayProfile{2 * time.Second, 0.6}
	// Firehose panes; a format overrides its pane's (official releases
	// are polled).
	paneDelay = map[db.Pane]delayProfile{
		db.PaneWire:      {1500 * time.Millisecond, 0.5},
		db.PaneTwitter:   {4 * time.Second, 0.7},
		db.PaneIansintel: {20 * time.Second, 0.6},
		db.PaneCrypto:    {30 * time.Second, 0.8},
		db.PaneNews:      {45 * time.Second, 0.9},
		db.PaneBlogs:     {6 * time.Minute, 1.0},
	}
	formatDelay = map[fhFormat]delayProfile{
		fmtFed:  {25 * time.Second, 0.5},
		fmtCFTC: {40 * time.Second, 0.5},
	}
)

// arrivals draws the received_at of generated rows. The zero of its
// pointer type (nil) is a live writer's: no received_at is generated.
type arrivals struct {
	r     *rand.Rand
	until time.Time
}

// newArrivals returns the arrival times of a generator's rows; stream
// tells the generators apart. No row is received at or after until (the
// end of the generated period).
func newArrivals(seed, stream uint64, until time.Time) *arrivals {
	return &arrivals{r: rand.New(rand.NewPCG(seed, streamReceived^stream)), until: until}
}

// at returns when a row of source key, created at t, was received.
func (a *arrivals) at(key string, p delayProfile, t time.Time) time.Time {
	// The source's own typical delay: between 0.5 and 2 times its kind's,
	// the same whatever the seed.
	h := fnv.New64a()
	h.Write([]byte(key))
	factor := math.Exp2(float64(h.Sum64()%1001)/500 - 1)
	d := time.Duration(float64(p.median) * factor * logNormal(a.r, 0, p.sigma))
	at := t.Add(max(d, 50*time.Millisecond)).Truncate(time.Millisecond)
	if !at.Before(a.until) {
		at = a.until.Add(-time.Millisecond)
	}
	if at.Before(t) {
		return t
	}
	return at
}
