package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedapi/feedapi/db/importer"
)

// Progress of an import, shown the way operators expect it: on a terminal
// one status line redrawn in place, with a bar when the size of the input
// is known; in a log (stderr not a terminal) an "import progress" line
// every interval.

// redrawEvery paces the terminal's status line: often enough to look
// alive, seldom enough to cost nothing.
const redrawEvery = 100 * time.Millisecond

// barWidth is the number of cells of the terminal's bar.
const barWidth = 30

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// importProgress receives an import's counts (importer.Options.Progress)
// and shows them. On a terminal it is also where the rejected lines are
// written (Write), so that a line never lands in the middle of the bar.
type importProgress struct {
	kind     string
	term     io.Writer    // the terminal; nil when stderr is not one
	log      *slog.Logger // used when term is nil
	interval time.Duration
	in       *countingReader
	total    int64 // bytes of the input; 0 when unknown (a pipe)
	now      func() time.Time

	mu    sync.Mutex
	start time.Time
	shown time.Time // when the counts were last shown
	last  importer.Result
	drawn bool // the status line is on the terminal
}

// newImportProgress returns the progress of importing in (total bytes, 0
// when unknown) of kind: drawn on term when it is not nil, else logged to
// log every interval (0: at every report).
func newImportProgress(kind string, in *countingReader, total int64, term io.Writer, log *slog.Logger, interval time.Duration) *importProgress {
	p := &importProgress{kind: kind, term: term, log: log, interval: interval, in: in, total: total, now: time.Now}
	p.start = p.now()
	return p
}

// report is importer.Options.Progress.
func (p *importProgress) report(r importer.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.last = r
	now := p.now()
	if p.term != nil {
		if now.Sub(p.shown) >= redrawEvery {
			p.shown = now
			p.draw()
		}
		return
	}
	if now.Sub(p.shown) < p.interval {
		return
	}
	p.shown = now
	elapsed := now.Sub(p.start)
	attrs := []slog.Attr{
		slog.String("kind", p.kind),
		slog.Int("lines_read", r.Read),
		slog.Int("imported", r.Imported),
		slog.Int("rejected", r.Rejected),
		slog.Int64("bytes_read", p.in.n.Load()),
	}
	if p.total > 0 {
		attrs = append(attrs, slog.Int64("bytes_total", p.total), slog.Float64("percent", p.percent()))
	}
	attrs = append(attrs, slog.String("elapsed", elapsed.Round(time.Millisecond).String()),
		slog.Int("lines_per_second", perSecond(r.Read, elapsed)))
	p.log.LogAttrs(context.Background(), slog.LevelInfo, "import progress", attrs...)
}

// Write writes a rejected line's report to the terminal: the status line
// is cleared first and drawn again after it.
func (p *importProgress) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		if _, err := io.WriteString(p.term, "\r\x1b[K"); err != nil {
			return 0, err
		}
		p.drawn = false
	}
	n, err := p.term.Write(b)
	if err == nil && p.shown != (time.Time{}) {
		p.draw()
	}
	return n, err
}

// finish clears the terminal's status line, for the summary that follows.
func (p *importProgress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn {
		_, _ = io.WriteString(p.term, "\r\x1b[K")
		p.drawn = false
	}
}

// draw writes the status line over the one before.
func (p *importProgress) draw() {
	_, _ = io.WriteString(p.term, "\r\x1b[K"+p.statusLine())
	p.drawn = true
}

// statusLine is the terminal's line: kind, bar and percentage when the
// size is known, counts, pace.
func (p *importProgress) statusLine() string {
	var b strings.Builder
	b.WriteString(p.kind)
	if p.total > 0 {
		pct := p.percent()
		full := int(pct / 100 * barWidth)
		b.WriteString(" [" + strings.Repeat("#", full) + strings.Repeat(".", barWidth-full) + "] ")
		b.WriteString(strconv.FormatFloat(pct, 'f', 0, 64) + "%")
	}
	fmt.Fprintf(&b, "  %s lines: %s imported, %s rejected  %s lines/s", grouped(p.last.Read), grouped(p.last.Imported),
		grouped(p.last.Rejected), grouped(perSecond(p.last.Read, p.now().Sub(p.start))))
	return b.String()
}

// percent is the share of the input read, from 0 to 100.
func (p *importProgress) percent() float64 {
	return min(float64(p.in.n.Load())*100/float64(p.total), 100)
}

// perSecond is n over d, per second.
func perSecond(n int, d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(float64(n) / d.Seconds())
}

// grouped writes n with thousands separators: 1,234,567.
func grouped(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return b.String()
}
