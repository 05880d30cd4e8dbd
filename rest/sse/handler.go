package sse

import (
	"net/http"
	"sync"
	"time"

	"github.com/feedapi/feedapi/graph/live"
)

// handlerSink carries a stream whose connection net/http keeps (HTTP/2, or
// a ResponseWriter that cannot hijack): the handler's goroutine, which
// lives as long as the stream anyway, does the writing. The group hands it
// work without blocking and takes it as delivering in the background until
// the goroutine has written it.
type handlerSink struct {
	work chan sinkWork // one at a time: the member is busy until it is done
	cut  chan struct{}
	once sync.Once
}

// sinkWork is one thing for the handler to write.
type sinkWork struct {
	events []byte
	end    *live.End
}

func (h *handlerSink) Deliver(_ *live.Member[*Events], p *live.Page[*Events]) bool {
	h.work <- sinkWork{events: p.Items.Payload}
	return false
}

func (h *handlerSink) Beat(*live.Member[*Events]) bool {
	h.work <- sinkWork{events: []byte(heartbeatEvent)}
	return false
}

func (h *handlerSink) End(_ *live.Member[*Events], e live.End) { h.work <- sinkWork{end: &e} }

func (h *handlerSink) Cut(*live.Member[*Events]) { h.once.Do(func() { close(h.cut) }) }

// ServeHere runs a stream in its handler's goroutine.
func ServeHere(l *live.Live, w http.ResponseWriter, rc *http.ResponseController, r *http.Request, st Start) {
	cfg := l.Config()
	h := &handlerSink{work: make(chan sinkWork, 1), cut: make(chan struct{})}
	m := st.Feed.Join(r.Context(), st.Key, st.Read, h, st.First, st.Wake)
	unwatch := l.Watch(st.KeyID, m.End)
	defer func() {
		unwatch()
		st.Release()
		m.Leave()
	}()
	// write writes b, flushed: a write that takes longer than the
	// slow-write limit ends the stream with slow_reader, one stuck longer
	// than the stuck-write limit is cut.
	write := func(b []byte) (ok bool) {
		start := time.Now()
		_ = rc.SetWriteDeadline(start.Add(cfg.StuckWrite()))
		if _, err := w.Write(b); err != nil || rc.Flush() != nil {
			return false
		}
		if time.Since(start) > cfg.SlowWrite {
			_ = rc.SetWriteDeadline(time.Now().Add(cfg.SlowWrite))
			_, _ = w.Write(FinalEvent(live.EndSlowReader))
			_ = rc.Flush()
			return false
		}
		return true
	}
	if st.First.N > 0 && !write(st.First.Items.Payload) {
		return
	}
	m.Ready(false)
	for {
		select {
		case job := <-h.work:
			if job.end != nil {
				_ = rc.SetWriteDeadline(l.FinalDeadline())
				_, _ = w.Write(FinalEvent(*job.end))
				_ = rc.Flush()
				return
			}
			if !write(job.events) {
				return
			}
			// It skipped the group's rounds while it wrote: read on at once.
			m.Ready(true)
		case <-h.cut:
			return
		case <-r.Context().Done():
			return
		}
	}
}
