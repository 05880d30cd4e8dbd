package rest

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/rest/envelope"
)

func TestAuthentication(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	revoked := a.newKey(db.TierFree)
	if _, err := a.keys.Revoke(context.Background(), revoked); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		name   string
		header []string // Authorization values
	}{
		{"missing", nil},
		{"empty", []string{""}},
		{"basic scheme", []string{"Basic " + a.free}},
		{"scheme without key", []string{"Bearer"}},
		{"scheme with blank key", []string{"Bearer   "}},
		{"key without scheme", []string{a.free}},
		{"two tokens", []string{"Bearer " + a.free + " extra"}},
		{"unknown key", []string{"Bearer fapi_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"}},
		{"malformed key", []string{"Bearer not-a-key"}},
		{"revoked key", []string{"Bearer " + revoked}},
		{"two headers", []string{"Bearer " + a.free, "Bearer " + a.free}},
	} {
		t.Run(tc.name+" gives 401", func(t *testing.T) {
			t.Parallel()
			for _, path := range []string{"/v1/posts", "/v1/posts/1", "/v1/briefs", "/v1/briefs/1", "/v1/firehose", "/v1/sources",
				"/v1/etf-flows", "/v1/etf-flows/latest", "/graphql?query=%7Bhealth%7Bstatus%7D%7D", "/v1/posts?limit=0"} {
				var h []string
				for _, v := range tc.header {
					h = append(h, "Authorization", v)
				}
				r := a.get(t, path, "", h...)
				r.wantStatus(t, http.StatusUnauthorized)
				if got, want := r.Header.Get("WWW-Authenticate"), `Bearer realm="feedapi"`; got != want {
					t.Errorf("%s: WWW-Authenticate = %q, want %q", path, got, want)
				}
				if r.env.Error.Code != "unauthorized" || r.env.Error.Message != "API key is missing, invalid or revoked" {
					t.Errorf("%s: error %+v", path, r.env.Error)
				}
				if r.env.Meta.Tier != nil {
					t.Errorf("%s: meta.tier = %q, want null", path, *r.env.Meta.Tier)
				}
				if r.Header.Get("RateLimit-Limit") != "" {
					t.Errorf("%s: a 401 carries RateLimit-Limit", path)
				}
			}
		})
	}

	t.Run("the scheme name is case-insensitive", func(t *testing.T) {
		t.Parallel()
		for _, scheme := range []string{"Bearer", "bearer", "BEARER", "bEaReR"} {
			r := a.get(t, "/v1/sources", "", "Authorization", scheme+" "+a.free)
			r.wantStatus(t, http.StatusOK)
		}
	})

	t.Run("meta.tier is the key's tier", func(t *testing.T) {
		t.Parallel()
		for key, tier := range map[string]string{a.free: "free", a.pro: "pro", a.intern: "internal"} {
			for _, path := range []string{"/v1/sources", "/v1/posts/1", "/v1/posts?limit=0"} {
				r := a.get(t, path, key)
				if r.env.Meta.Tier == nil || *r.env.Meta.Tier != tier {
					t.Errorf("%s: meta.tier = %v, want %s", path, r.env.Meta.Tier, tier)
				}
			}
		}
	})

	t.Run("health and openapi need no key and ignore a bad one", func(t *testing.T) {
		t.Parallel()
		for _, path := range []string{"/v1/health", "/v1/openapi.json"} {
			a.get(t, path, "").wantStatus(t, http.StatusOK)
			a.get(t, path, "not-a-key").wantStatus(t, http.StatusOK)
		}
	})
}

func TestTiers(t *testing.T) {
	t.Parallel()
	a := newAPI(t)
	const gql = "/graphql?query=%7Bhealth%7Bstatus%7D%7D"

	t.Run("every tier may use every /v1 endpoint", func(t *testing.T) {
		t.Parallel()
		for _, key := range []string{a.free, a.pro, a.intern} {
			for _, path := range []string{"/v1/posts", "/v1/briefs", "/v1/firehose", "/v1/sources", "/v1/etf-flows", "/v1/etf-flows/latest"} {
				a.get(t, path, key).wantStatus(t, http.StatusOK)
			}
		}
	})

	t.Run("/graphql refuses free and pro with 403", func(t *testing.T) {
		t.Parallel()
		for _, key := range []string{a.free, a.pro} {
			for _, method := range []string{http.MethodGet, http.MethodPost} {
				var r *resp
				if method == http.MethodGet {
					r = a.get(t, gql, key)
				} else {
					r = a.do(t, method, "/graphql", key, strings.NewReader(`{"query":"{health{status}}"}`), "Content-Type", "application/json")
				}
				r.wantStatus(t, http.StatusForbidden)
				if r.env.Error.Code != "forbidden_tier" || !strings.Contains(r.env.Error.Message, "internal") {
					t.Errorf("error %+v, want forbidden_tier naming internal", r.env.Error)
				}
				if r.Header.Get("RateLimit-Remaining") == "" {
					t.Errorf("a keyed 403 without RateLimit-Remaining")
				}
			}
		}
	})

	t.Run("/graphql serves internal keys by GET and POST", func(t *testing.T) {
		t.Parallel()
		for _, r := range []*resp{
			a.get(t, gql, a.intern),
			a.do(t, http.MethodPost, "/graphql", a.intern, strings.NewReader(`{"query":"{health{status apiVersion}}"}`), "Content-Type", "application/json"),
		} {
			r.wantStatus(t, http.StatusOK)
			var body struct {
				Data struct {
					Health struct{ Status string } `json:"health"`
				} `json:"data"`
			}
			if err := json.Unmarshal(r.plain, &body); err != nil || body.Data.Health.Status != "ok" {
				t.Errorf("graphql response %s (%v)", r.plain, err)
			}
			if got := r.Header.Get("Content-Type"); got != envelope.ContentTypeJSON {
				t.Errorf("Content-Type = %q, want %q", got, envelope.ContentTypeJSON)
			}
		}
	})
}
