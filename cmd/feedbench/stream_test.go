package main

import "testing"

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
