package keys_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
)

func TestCreateRefusesNamesThatBreakListings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := keys.NewService(dbtest.New(t), keys.Options{})
	tests := []struct {
		name string
		ok   bool
	}{
		{"", true},
		{"trading bot (Ana Müller) — prod", true},
		{strings.Repeat("ü", keys.MaxNameLength), true},
		{strings.Repeat("x", keys.MaxNameLength+1), false},
		{"bot\nfake row", false},
		{"bot\tcolumn", false},
		{"bot\r", false},
		{"\x1b[31mred", false},
		{"bad \xff utf-8", false},
	}
	for _, tt := range tests {
		_, _, err := svc.Create(ctx, db.TierFree, tt.name)
		var ae *apperr.Error
		switch {
		case tt.ok && err != nil:
			t.Errorf("name %q: %v, want it accepted", tt.name, err)
		case !tt.ok && (!errors.As(err, &ae) || ae.Code != apperr.BadRequest || !strings.Contains(ae.Message, "name")):
			t.Errorf("name %q: got %v, want a bad_request naming the name", tt.name, err)
		}
	}
}

func TestReplaceLeavesOneLiveKeyPerName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := keys.NewService(dbtest.New(t), keys.Options{})
	other, _, err := svc.Create(ctx, db.TierFree, "someone else")
	if err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for range 3 {
		s, _, err := svc.Replace(ctx, db.TierInternal, "demo internal")
		if err != nil {
			t.Fatal(err)
		}
		secrets = append(secrets, s)
	}
	for i, s := range secrets {
		_, err := svc.Authenticate(ctx, s)
		if last := i == len(secrets)-1; last != (err == nil) {
			t.Errorf("key %d of 3: authenticate err = %v, want only the last one live", i+1, err)
		}
	}
	if _, err := svc.Authenticate(ctx, other); err != nil {
		t.Errorf("a key of another name was revoked: %v", err)
	}
	list, err := svc.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, k := range list {
		if k.Name == "demo internal" && k.RevokedAt == nil {
			live++
		}
	}
	if live != 1 {
		t.Errorf("%d live keys named %q, want 1", live, "demo internal")
	}
}
