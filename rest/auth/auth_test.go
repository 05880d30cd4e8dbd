package auth

import "testing"

func TestBearer(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		headers []string
		want    string
		ok      bool
	}{
		{[]string{"Bearer k1"}, "k1", true},
		{[]string{"bearer  k1 "}, "k1", true},
		{[]string{"BEARER\tk1"}, "", false},
		{nil, "", false},
		{[]string{"Bearer"}, "", false},
		{[]string{"Bearer "}, "", false},
		{[]string{"Bearer a b"}, "", false},
		{[]string{"Token k1"}, "", false},
		{[]string{"Bearer k1", "Bearer k1"}, "", false},
	} {
		got, ok := bearer(tc.headers)
		if got != tc.want || ok != tc.ok {
			t.Errorf("bearer(%q) = %q, %v; want %q, %v", tc.headers, got, ok, tc.want, tc.ok)
		}
	}
}
