package main

import (
	"testing"
	"time"
)

func TestPostIDOf(t *testing.T) {
	for _, tc := range []struct {
		data string
		id   int64
		ok   bool
	}{
		{`{"id":5000123,"uid":"cp_5000123","source":"FeedbenchStream"}`, 5000123, true},
		{`{"id":7}`, 7, true},
		{`{"uid":"cp_42","id":42}`, 42, true},
		{`{"id":"x"}`, 0, false},
		{`not json`, 0, false},
	} {
		id, ok := postIDOf([]byte(tc.data))
		if id != tc.id || ok != tc.ok {
			t.Errorf("postIDOf(%s) = %d, %v; want %d, %v", tc.data, id, ok, tc.id, tc.ok)
		}
	}
}

func TestReceivedAtOf(t *testing.T) {
	want := time.Date(2026, 11, 26, 13, 5, 7, 123456000, time.UTC)
	for _, tc := range []struct {
		data string
		want time.Time
	}{
		{`{"id":7,"received_at":"2026-11-26T13:05:07.123456Z","updated_at":null}`, want},
		{`{"id":7,"received_at":"2026-11-26T14:05:07.123456+01:00"}`, want},
		{`{"id":7,"received_at":null}`, time.Time{}},
		{`{"id":7}`, time.Time{}},
		{`{"id":7,"received_at":"yesterday"}`, time.Time{}},
	} {
		if got := receivedAtOf([]byte(tc.data)); !got.Equal(tc.want) {
			t.Errorf("receivedAtOf(%s) = %s, want %s", tc.data, got, tc.want)
		}
	}
}

// The delays run from each item's own start, and an item without a start
// (no received_at) or without an arrival counts as missing, not as zero.
func TestLatencies(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	from := []time.Time{t0, t0.Add(time.Second), {}}
	arrivals := [][]time.Time{
		{t0.Add(10 * time.Millisecond), t0.Add(time.Second + 30*time.Millisecond), t0.Add(5 * time.Second)},
		{t0.Add(20 * time.Millisecond), {}, t0.Add(5 * time.Second)},
	}
	l := latencies(arrivals, from)
	if l.missing != 3 || l.p50 != 20*time.Millisecond || l.max != 30*time.Millisecond {
		t.Errorf("latencies = %+v, want 3 missing, p50 20ms, max 30ms", l)
	}
}
