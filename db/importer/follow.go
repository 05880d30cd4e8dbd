package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"
)

// readAhead is how many lines the reader may hold that follow has not taken
// yet (at most readAhead MiB, the longest line being 1 MiB): it reads on
// while a batch is written, so that lines that arrive meanwhile form the
// next batch instead of waiting one transaction each.
const readAhead = 32

// maxLinger bounds how long the first line of a batch waits for more lines
// in follow mode before the batch is written, so that a steady stream of
// lines is committed in small batches rather than in full ones.
const maxLinger = 20 * time.Millisecond

// streamLine is one line read by a follow reader.
type streamLine struct {
	n       int
	line    []byte
	tooLong bool
	// more is set when another complete line was already buffered after
	// this one: reading it will not wait for the input.
	more bool
}

// follow reads r line by line as lines arrive and writes each batch as soon
// as no complete line is waiting behind it (read, or buffered to be read
// without waiting for input), with the validation and the
// reports of readAll. It returns at the end of r, or when ctx is cancelled:
// then it still takes the lines already read from r (never waiting for more
// input), writes them and returns nil. Writes are not cancelled by
// ctx, so that what was read is committed; a write that fails is an error,
// as in readAll. The goroutine reading r ends when r returns (EOF or an
// error), which for a pipe may be after follow has returned.
func (im *importer[T, K]) follow(ctx context.Context, r io.Reader) error {
	lines := make(chan streamLine, readAhead)
	readErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	var waiting atomic.Bool
	go readStream(r, lines, readErr, stop, &waiting)

	wctx := context.WithoutCancel(ctx)
	var first time.Time // arrival of the batch's first line
	more := false       // the last line said another one is buffered
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	take := func(l streamLine) error {
		if len(im.rows) == 0 && len(im.rejects) == 0 {
			first = time.Now()
			timer.Reset(maxLinger)
		}
		im.take(l.n, l.line, l.tooLong)
		more = l.more || len(lines) > 0
		if !more || im.full() || time.Since(first) >= maxLinger {
			timer.Stop()
			return im.flush(wctx)
		}
		return nil
	}
	for {
		select {
		case l := <-lines:
			if err := take(l); err != nil {
				return err
			}
		case <-timer.C:
			if err := im.flush(wctx); err != nil {
				return err
			}
		case err := <-readErr:
			return im.finish(wctx, lines, err, take)
		case <-ctx.Done():
			return im.drain(wctx, lines, readErr, &waiting, &more, take)
		}
	}
}

// finish ends a follow once the reader has stopped with err: the reader
// sent every line before its error, so it takes the lines still queued,
// writes them, and returns err unless it is the end of the input.
func (im *importer[T, K]) finish(wctx context.Context, lines <-chan streamLine, err error, take func(streamLine) error) error {
	for len(lines) > 0 {
		if terr := take(<-lines); terr != nil {
			return terr
		}
	}
	if ferr := im.flush(wctx); ferr != nil {
		return ferr
	}
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// drain takes the lines the reader has already read, until it waits for
// input with no complete line buffered, then writes them: what was read is
// committed, and nothing waits for more input.
func (im *importer[T, K]) drain(wctx context.Context, lines <-chan streamLine, readErr <-chan error,
	waiting *atomic.Bool, more *bool, take func(streamLine) error) error {
	for {
		select {
		case l := <-lines:
			if err := take(l); err != nil {
				return err
			}
			continue
		case err := <-readErr:
			return im.finish(wctx, lines, err, take)
		default:
		}
		if !*more && waiting.Load() {
			return im.flush(wctx)
		}
		time.Sleep(time.Millisecond) // the reader is about to send a line it holds
	}
}

// readStream sends the lines of r to out until r ends, then its error
// (io.EOF at the end) to errc. It stops early when stop is closed.
// waiting is set while it may wait for input: no complete line is buffered.
func readStream(r io.Reader, out chan<- streamLine, errc chan<- error, stop <-chan struct{}, waiting *atomic.Bool) {
	br := bufio.NewReaderSize(r, 64<<10)
	for n := 1; ; n++ {
		waiting.Store(!lineBuffered(br))
		line, tooLong, err := readLine(br, nil)
		waiting.Store(false)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				err = fmt.Errorf("read line %d: %w", n, err)
			}
			errc <- err
			return
		}
		select {
		case out <- streamLine{n: n, line: line, tooLong: tooLong, more: lineBuffered(br)}:
		case <-stop:
			return
		}
	}
}

// lineBuffered reports whether br holds a complete line it can return
// without reading from its source.
func lineBuffered(br *bufio.Reader) bool {
	b, _ := br.Peek(br.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}
