package rest

import (
	"net/http"
	"strings"
	"testing"
)

// A browser cannot send a bearer key when it navigates, so the GraphiQL page
// itself needs none; everything that runs a query still does.
func TestGraphQLPlaygroundNeedsNoKey(t *testing.T) {
	t.Parallel()
	a := newAPI(t)

	page := a.get(t, "/graphql", "", "Accept", "text/html,application/xhtml+xml")
	page.wantStatus(t, http.StatusOK)
	if ct := page.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type = %q, want text/html", ct)
	}
	if !strings.Contains(string(page.plain), "<html") {
		t.Errorf("body is not the playground page: %.200s", page.plain)
	}
	if page.Header.Get("RateLimit-Limit") == "" {
		t.Error("the page is not rate limited per client IP")
	}

	tests := []struct {
		name, path, key string
		header          []string
		want            int
	}{
		{"query by GET without key", "/graphql?query=%7Bhealth%7Bstatus%7D%7D", "", []string{"Accept", "text/html"}, http.StatusUnauthorized},
		{"JSON GET without key", "/graphql", "", nil, http.StatusUnauthorized},
		{"page for a free key is still the page", "/graphql", a.free, []string{"Accept", "text/html"}, http.StatusOK},
		{"query by GET with a free key", "/graphql?query=%7Bhealth%7Bstatus%7D%7D", a.free, nil, http.StatusForbidden},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.get(t, tt.path, tt.key, tt.header...).wantStatus(t, tt.want)
		})
	}
	post := a.do(t, http.MethodPost, "/graphql", "", strings.NewReader(`{"query":"{health{status}}"}`),
		"Accept", "text/html", "Content-Type", "application/json")
	post.wantStatus(t, http.StatusUnauthorized)
}
