package keys_test

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
	"github.com/feedapi/feedapi/graph/apperr"
	"github.com/feedapi/feedapi/graph/keys"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

// clock is a settable time source for cache expiry.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestCreateStoresOnlyHash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := dbtest.New(t)
	svc := keys.NewService(bdb, keys.Options{})

	secret, key, err := svc.Create(ctx, db.TierFree, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, keys.Prefix) {
		t.Errorf("secret %q lacks prefix %q", secret, keys.Prefix)
	}
	if got := len(secret) - len(keys.Prefix); got*5 < 128 {
		t.Errorf("secret carries %d bits, want at least 128", got*5)
	}
	var stored int
	if err := bdb.NewRaw("SELECT count(*) FROM api_keys WHERE position(? in encode(key_hash, 'escape')) > 0 OR name = ? OR prefix = ?",
		secret, secret, secret).Scan(ctx, &stored); err != nil {
		t.Fatal(err)
	}
	if stored != 0 {
		t.Error("the secret is stored in clear")
	}
	want := sha256.Sum256([]byte(secret))
	if string(key.KeyHash) != string(want[:]) {
		t.Error("stored hash is not SHA-256 of the secret")
	}
	other, _, err := svc.Create(ctx, db.TierFree, "bob")
	if err != nil {
		t.Fatal(err)
	}
	if other == secret {
		t.Error("two keys are equal")
	}
	if _, _, err := svc.Create(ctx, db.Tier("gold"), "x"); apperr.CodeOf(err) != apperr.BadRequest {
		t.Errorf("unknown tier: got %v, want bad_request", err)
	}
}

func TestAuthenticate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := dbtest.New(t)
	svc := keys.NewService(bdb, keys.Options{})
	secret, key, err := svc.Create(ctx, db.TierInternal, "dash")
	if err != nil {
		t.Fatal(err)
	}
	p, err := svc.Authenticate(ctx, secret)
	if err != nil {
		t.Fatalf("valid key: %v", err)
	}
	if p.KeyID != key.ID || p.Tier != db.TierInternal || p.Name != "dash" {
		t.Errorf("principal = %+v, want id %d tier internal name dash", p, key.ID)
	}

	flipped := []byte(secret)
	flipped[len(flipped)-1] ^= 1
	for name, presented := range map[string]string{
		"empty":          "",
		"no prefix":      strings.TrimPrefix(secret, keys.Prefix),
		"wrong length":   secret + "a",
		"bad alphabet":   secret[:len(secret)-1] + "!",
		"unknown secret": string(flipped),
	} {
		if _, err := svc.Authenticate(ctx, presented); !errors.Is(err, keys.ErrUnauthorized) {
			t.Errorf("%s: got %v, want ErrUnauthorized", name, err)
		}
	}
}

func TestRevokeTakesEffectWithinCacheTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := dbtest.New(t)
	clk := &clock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	// Two services over one database stand for two replicas.
	replicaA := keys.NewService(bdb, keys.Options{CacheTTL: 2 * time.Second, Now: clk.Now})
	replicaB := keys.NewService(bdb, keys.Options{CacheTTL: 2 * time.Second, Now: clk.Now})

	tests := []struct {
		name   string
		revoke func(secret string, id int64) string
	}{
		{"by id", func(_ string, id int64) string { return strconv.FormatInt(id, 10) }},
		{"by key", func(secret string, _ int64) string { return secret }},
	}
	for _, tt := range tests {
		secret, key, err := replicaA.Create(ctx, db.TierFree, tt.name)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range []*keys.Service{replicaA, replicaB} {
			if _, err := r.Authenticate(ctx, secret); err != nil {
				t.Fatalf("%s: before revoke: %v", tt.name, err)
			}
		}
		revoked, err := replicaA.Revoke(ctx, tt.revoke(secret, key.ID))
		if err != nil {
			t.Fatalf("%s: revoke: %v", tt.name, err)
		}
		if revoked.RevokedAt == nil {
			t.Errorf("%s: revoked_at not set", tt.name)
		}
		if _, err := replicaA.Authenticate(ctx, secret); !errors.Is(err, keys.ErrUnauthorized) {
			t.Errorf("%s: revoking replica still accepts the key: %v", tt.name, err)
		}
		clk.Add(2 * time.Second)
		if _, err := replicaB.Authenticate(ctx, secret); !errors.Is(err, keys.ErrUnauthorized) {
			t.Errorf("%s: other replica accepts the key after the cache TTL: %v", tt.name, err)
		}
		if _, err := replicaA.Revoke(ctx, tt.revoke(secret, key.ID)); err != nil {
			t.Errorf("%s: second revoke: %v", tt.name, err)
		}
	}

	if _, err := replicaA.Revoke(ctx, "999999"); apperr.CodeOf(err) != apperr.NotFound {
		t.Errorf("revoke missing id: got %v, want not_found", err)
	}
	if _, err := replicaA.Revoke(ctx, "abc"); apperr.CodeOf(err) != apperr.BadRequest {
		t.Errorf("revoke garbage: got %v, want bad_request", err)
	}
}

func TestListShowsNoSecrets(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := dbtest.New(t)
	svc := keys.NewService(bdb, keys.Options{})
	secret, _, err := svc.Create(ctx, db.TierPro, "carol")
	if err != nil {
		t.Fatal(err)
	}
	list, err := svc.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Name != "carol" || list[0].Tier != db.TierPro {
		t.Fatalf("list = %+v, want one pro key named carol", list)
	}
	if strings.Contains(list[0].Prefix, secret) || len(list[0].Prefix) >= len(secret) {
		t.Errorf("prefix %q reveals the secret", list[0].Prefix)
	}
}

// Made-up keys are cached apart from real ones: a flood of them must not
// evict a verified key (which would send every real client to the database).
func TestBadKeysDoNotEvictGoodOnes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := dbtest.New(t)
	clk := &clock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	svc := keys.NewService(bdb, keys.Options{CacheSize: 4, CacheTTL: time.Minute, Now: clk.Now})
	secret, key, err := svc.Create(ctx, db.TierFree, "real")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}
	// Revoked behind the service's back: only a database lookup would notice.
	if _, err := bdb.NewRaw("UPDATE api_keys SET revoked_at = now() WHERE id = ?", key.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		made := []byte(secret)
		made[len(keys.Prefix)+i%8] = "abcdefgh"[i/8]
		_, _ = svc.Authenticate(ctx, string(made))
	}
	if _, err := svc.Authenticate(ctx, secret); err != nil {
		t.Errorf("the verified key was evicted by made-up keys and looked up again: %v", err)
	}
}
