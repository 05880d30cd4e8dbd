package keys_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/uptrace/bun"

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

// countHook counts the SQL statements run through a bun.DB.
type countHook struct{ n *atomic.Int64 }

func (h countHook) BeforeQuery(ctx context.Context, _ *bun.QueryEvent) context.Context { return ctx }
func (h countHook) AfterQuery(context.Context, *bun.QueryEvent)                        { h.n.Add(1) }

// randomKey returns a well-formed key that nobody issued.
func randomKey(t testing.TB) string {
	t.Helper()
	raw := make([]byte, 20)
	if _, err := rand.Read(raw); err != nil {
		t.Fatal(err)
	}
	return keys.Prefix + strings.ToLower(base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw))
}

// A flood of made-up keys must not reach the database one query each: the
// service knows which keys were issued, and learns new ones at most once
// per refresh interval (100ms by default) however many unknown keys arrive.
func TestUnknownKeysCostNoQuery(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := dbtest.New(t)
	var statements atomic.Int64
	svc := keys.NewService(bdb.WithQueryHook(countHook{&statements}), keys.Options{})
	secret, _, err := svc.Create(ctx, db.TierFree, "real")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, secret); err != nil {
		t.Fatal(err)
	}

	const workers, perWorker = 50, 20
	before := statements.Load()
	start := time.Now()
	var wg sync.WaitGroup
	var wrong atomic.Int64
	for range workers {
		wg.Go(func() {
			for range perWorker {
				if _, err := svc.Authenticate(ctx, randomKey(t)); !errors.Is(err, keys.ErrUnauthorized) {
					wrong.Add(1)
					t.Errorf("made-up key: got %v, want ErrUnauthorized", err)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	got := statements.Load() - before
	// One read of the new keys per interval at most, plus the one under way.
	limit := int64(elapsed/(100*time.Millisecond)) + 2
	t.Logf("%d made-up keys in %s: %d SQL statements", workers*perWorker, elapsed.Round(time.Millisecond), got)
	if got > limit {
		t.Errorf("%d made-up keys cost %d SQL statements in %s, want at most %d (one per 100ms)",
			workers*perWorker, got, elapsed.Round(time.Millisecond), limit)
	}
	if _, err := svc.Authenticate(ctx, secret); err != nil {
		t.Errorf("the real key after the flood: %v", err)
	}
}

// A key issued elsewhere (another replica, `feedapi keys create`) works at
// its first request, also when its insert commits after a later key's.
func TestNewKeyWorksAtFirstRequest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bdb := dbtest.New(t)
	issuer := keys.NewService(bdb, keys.Options{})
	server := keys.NewService(bdb, keys.Options{})
	first, _, err := issuer.Create(ctx, db.TierFree, "first")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := server.Authenticate(ctx, first); err != nil {
		t.Fatalf("first key: %v", err)
	}

	// A slow insert takes its id, then a quick one takes the next id and
	// commits; the server sees the later id before the earlier one exists.
	tx, err := bdb.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback() //nolint:errcheck // committed below
	slow, _, err := keys.NewService(tx, keys.Options{}).Create(ctx, db.TierPro, "slow")
	if err != nil {
		t.Fatal(err)
	}
	quick, _, err := issuer.Create(ctx, db.TierFree, "quick")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, secret string
		before       func()
	}{
		{"a new key", quick, func() {}},
		{"a key committed after a later one", slow, func() {
			if _, err := server.Authenticate(ctx, slow); !errors.Is(err, keys.ErrUnauthorized) {
				t.Errorf("uncommitted key: got %v, want ErrUnauthorized", err)
			}
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		tt.before()
		if _, err := server.Authenticate(ctx, tt.secret); err != nil {
			t.Errorf("%s: first request: %v", tt.name, err)
		}
	}
}

// With a replica configured, keys are verified on the replica while the
// primary does not answer, and revocations that reach the replica count.
func TestKeysFromReplicaWhilePrimaryIsAway(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	replica := dbtest.New(t)
	// Nothing listens on port 1: the primary refuses every connection.
	primary, err := db.Open("postgres://postgres@127.0.0.1:1/feedapi?sslmode=disable", db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer primary.Close()
	var logs bytes.Buffer
	clk := &clock{now: time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)}
	svc := keys.NewService(primary, keys.Options{Replica: replica, CacheTTL: 2 * time.Second, Now: clk.Now,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer svc.Close()
	// The key was issued before the outage and has replicated.
	secret, key, err := keys.NewService(replica, keys.Options{}).Create(ctx, db.TierPro, "bot")
	if err != nil {
		t.Fatal(err)
	}

	p, err := svc.Authenticate(ctx, secret)
	if err != nil {
		t.Fatalf("during the outage: %v", err)
	}
	if p.KeyID != key.ID || p.Tier != db.TierPro {
		t.Errorf("principal = %+v, want key %d of tier pro", p, key.ID)
	}
	if _, err := svc.Authenticate(ctx, randomKey(t)); !errors.Is(err, keys.ErrUnauthorized) {
		t.Errorf("made-up key during the outage: got %v, want ErrUnauthorized", err)
	}
	if !strings.Contains(logs.String(), "verifying keys on the read replica") {
		t.Errorf("the switch to the replica was not logged:\n%s", logs.String())
	}
	if _, err := replica.NewRaw("UPDATE api_keys SET revoked_at = now() WHERE id = ?", key.ID).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Add(2 * time.Second)
	if _, err := svc.Authenticate(ctx, secret); !errors.Is(err, keys.ErrUnauthorized) {
		t.Errorf("revoked on the replica, after the cache TTL: got %v, want ErrUnauthorized", err)
	}
}
