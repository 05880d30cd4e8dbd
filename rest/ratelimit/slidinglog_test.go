package ratelimit

import (
	"testing"
	"time"
)

// TestLocalLogBounded: a budget's log in memory never holds more than its
// limit, and a budget nobody uses any more is dropped.
func TestLocalLogBounded(t *testing.T) {
	t.Parallel()
	l := newLocalLogs()
	now := time.Unix(1_800_000_000, 0)
	for i := range 10_000 {
		l.count("k", 50, true, false, now.Add(time.Duration(i)*time.Millisecond))
		l.count("k", 50, false, false, now.Add(time.Duration(i)*time.Millisecond))
	}
	sh := l.shard("k")
	if got := len(sh.logs["k"].times); got != 50 {
		t.Errorf("log of k holds %d entries, want 50 (its limit)", got)
	}
	if got := cap(sh.logs["k"].times); got > 3*50 {
		t.Errorf("log of k has capacity %d, want at most a few times its limit", got)
	}
	sh.sweep(now.Add(time.Hour).UnixMicro())
	if _, ok := sh.logs["k"]; ok {
		t.Errorf("the log of k outlived its window")
	}
}
