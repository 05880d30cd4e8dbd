package live

import (
	"fmt"
	"testing"
	"time"
)

// TestSharedReads: a consumer takes a read of its key of its generation or
// later, and one that passes notBefore never gets a read started before it.
func TestSharedReads(t *testing.T) {
	tests := []struct {
		name      string
		gen       uint64
		notBefore func(first time.Time) time.Time
		wantReads int
	}{
		{"same generation shares", 1, func(time.Time) time.Time { return time.Time{} }, 1},
		{"older generation shares", 0, func(time.Time) time.Time { return time.Time{} }, 1},
		{"newer generation reads again", 2, func(time.Time) time.Time { return time.Time{} }, 2},
		{"a timer's read reads again", 1, func(first time.Time) time.Time { return first.Add(time.Nanosecond) }, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSharedReads[int](time.Now)
			reads := 0
			read := func() (int, error) { reads++; return reads, nil }
			current := func() uint64 { return 1 }
			before := time.Now()
			if _, err := s.do("k", 1, time.Time{}, current, read); err != nil {
				t.Fatal(err)
			}
			got, err := s.do("k", tt.gen, tt.notBefore(time.Now()), func() uint64 { return tt.gen }, read)
			if err != nil {
				t.Fatal(err)
			}
			if reads != tt.wantReads || got != tt.wantReads {
				t.Errorf("%d reads, result %d; want %d", reads, got, tt.wantReads)
			}
			// Another key never shares.
			if _, err := s.do("other", 0, before, current, read); err != nil || reads != tt.wantReads+1 {
				t.Errorf("another key: %d reads, %v", reads, err)
			}
		})
	}
}

// TestSharedReadsForgetFinishedReads: a finished read is kept for sharing
// only for sharedReadTTL, so the rendered pages of positions that every
// consumer has left (streams that closed) do not stay in memory; a read
// still running is never dropped.
func TestSharedReadsForgetFinishedReads(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	s := newSharedReads[int](func() time.Time { return now })
	current := func() uint64 { return 1 }
	read := func() (int, error) { return 1, nil }
	for i := range 100 {
		if _, err := s.do(fmt.Sprint("closed-stream-", i), 1, time.Time{}, current, read); err != nil {
			t.Fatal(err)
		}
	}
	if got := s.kept(); got != 100 {
		t.Fatalf("right after the reads: %d kept, want 100", got)
	}

	release := make(chan struct{})
	running := make(chan struct{})
	go func() {
		_, _ = s.do("running", 1, time.Time{}, current, func() (int, error) {
			close(running)
			<-release
			return 2, nil
		})
	}()
	<-running

	now = now.Add(sharedReadTTL - time.Second)
	if _, err := s.do("fresh", 1, time.Time{}, current, read); err != nil {
		t.Fatal(err)
	}
	if got := s.kept(); got != 102 {
		t.Fatalf("before the TTL: %d kept, want 102", got)
	}
	now = now.Add(2 * time.Second)
	if _, err := s.do("later", 1, time.Time{}, current, read); err != nil {
		t.Fatal(err)
	}
	// The 100 finished reads are gone; "running", "fresh" and "later" stay.
	if got := s.kept(); got != 3 {
		t.Fatalf("after the TTL: %d kept, want 3", got)
	}
	close(release)
}
