package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/apperr"
)

// Prefix starts every key, so a leaked key is recognisable in logs and scanners.
const Prefix = "fapi_"

// secretBytes is the key's randomness: 160 bits, above the contract's 128.
const secretBytes = 20

// encoding writes keys in lower-case base32: URL- and header-safe, no padding.
var encoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// ErrUnauthorized is the client-facing error for a missing, invalid or revoked key.
var ErrUnauthorized = apperr.New(apperr.Unauthorized, "API key is missing, invalid or revoked")

// Options tunes a Service. Zero values take the defaults.
type Options struct {
	// CacheTTL bounds how long a verification result is reused (default 2s).
	// It is the longest a revoked key keeps working on a replica.
	CacheTTL time.Duration
	// CacheSize bounds the number of cached results (default 10000).
	CacheSize int
	// Now returns the current time (default time.Now).
	Now func() time.Time

	// Replica, when set, is a read replica of the database. Keys are read
	// from it while the primary does not answer, so that reads go on
	// through a primary outage; a revocation then counts once it has
	// reached the replica.
	Replica bun.IDB
	// PrimaryTimeout bounds a read of keys on the primary when a replica
	// can take over, and the ping that tells the primary is back (default
	// 500ms).
	PrimaryTimeout time.Duration
	// PrimaryRetry is how often the primary is pinged while it is away
	// (default 1s); once it answers, keys are read from it again and
	// every cached verification is dropped, so a revocation the replica
	// had not seen counts within about PrimaryRetry of its return.
	PrimaryRetry time.Duration
	// RefreshInterval is the least time between two reads of the keys
	// issued since the last one (default 100ms). A secret whose hash is not
	// among the issued keys waits for the next read, so a new key works at
	// its first request and made-up keys cost at most one small query per
	// interval, however many arrive.
	RefreshInterval time.Duration
	// Logger hears when the primary goes away and comes back (default:
	// discard).
	Logger *slog.Logger
}

// Service issues, lists, revokes and verifies keys.
type Service struct {
	idb    bun.IDB
	opts   Options
	src    *source // where keys are read: the primary, or the replica while it is away
	issued *issued // hashes of every issued key

	// Verified keys and refused secrets are cached apart, each bounded by
	// CacheSize, so that a flood of made-up keys cannot evict real ones.
	mu      sync.Mutex
	valid   map[[sha256.Size]byte]cached
	invalid map[[sha256.Size]byte]cached
}

type cached struct {
	principal Principal
	valid     bool
	expires   time.Time
}

// NewService returns a key service over the given database.
func NewService(idb bun.IDB, opts Options) *Service {
	if opts.CacheTTL <= 0 {
		opts.CacheTTL = 2 * time.Second
	}
	if opts.CacheSize <= 0 {
		opts.CacheSize = 10000
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.PrimaryTimeout <= 0 {
		opts.PrimaryTimeout = 500 * time.Millisecond
	}
	if opts.PrimaryRetry <= 0 {
		opts.PrimaryRetry = time.Second
	}
	if opts.RefreshInterval <= 0 {
		opts.RefreshInterval = 100 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{idb: idb, opts: opts,
		valid: make(map[[sha256.Size]byte]cached), invalid: make(map[[sha256.Size]byte]cached)}
	s.src = &source{primary: idb, replica: opts.Replica, timeout: opts.PrimaryTimeout, retry: opts.PrimaryRetry,
		log: opts.Logger, back: s.forgetAll, stop: make(chan struct{})}
	s.issued = newIssued(s.src.read, opts.RefreshInterval, refreshTimeout, holeTTL, opts.Now)
	return s
}

// Close stops the background pings of a primary that has gone away (with
// Options.Replica). Call it when the service is no longer needed.
func (s *Service) Close() {
	s.src.close()
}

const (
	// refreshTimeout bounds one read of the issued keys.
	refreshTimeout = 2 * time.Second
	// holeTTL is how long the issued set waits for a key whose id it
	// skipped (an insert that commits after a later one) before it gives
	// the id up as burnt by a failed insert.
	holeTTL = time.Minute
)

// Create issues a key of the given tier. The secret is returned once and
// never stored; only its hash is.
func (s *Service) Create(ctx context.Context, tier db.Tier, name string) (secret string, key db.APIKey, err error) {
	if !tier.Valid() {
		return "", db.APIKey{}, apperr.Invalid("tier", "tier must be one of free, pro, internal")
	}
	if err := checkName(name); err != nil {
		return "", db.APIKey{}, err
	}
	raw := make([]byte, secretBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", db.APIKey{}, fmt.Errorf("generate key: %w", err)
	}
	secret = Prefix + encoding.EncodeToString(raw)
	hash := sha256.Sum256([]byte(secret))
	key = db.APIKey{KeyHash: hash[:], Prefix: secret[:len(Prefix)+6], Tier: tier, Name: name}
	if err := db.InsertAPIKey(ctx, s.idb, &key); err != nil {
		return "", db.APIKey{}, err
	}
	s.issued.add(hash)
	return secret, key, nil
}

// MaxNameLength is the longest key name, in characters.
const MaxNameLength = 200

// PlainName reports whether name is UTF-8 text without control characters
// (newlines, tabs, escapes): text that keeps a listing's row on one line.
func PlainName(name string) bool {
	return utf8.ValidString(name) && strings.IndexFunc(name, unicode.IsControl) < 0
}

// checkName refuses names that would break a listing (not PlainName) or
// that are longer than MaxNameLength characters.
func checkName(name string) error {
	if !PlainName(name) || utf8.RuneCountInString(name) > MaxNameLength {
		return apperr.Invalid("name", "name must be at most %d characters of UTF-8 text without control characters (newlines, tabs)", MaxNameLength)
	}
	return nil
}

// Replace revokes every unrevoked key of that name and issues a new one in
// its place, so that a name stands for one live key (the demo's keys, a
// rotated service key).
func (s *Service) Replace(ctx context.Context, tier db.Tier, name string) (secret string, key db.APIKey, err error) {
	if err := checkName(name); err != nil {
		return "", db.APIKey{}, err
	}
	revoked, err := db.RevokeAPIKeysNamed(ctx, s.idb, name, s.opts.Now())
	if err != nil {
		return "", db.APIKey{}, err
	}
	for _, k := range revoked {
		s.forget(k.KeyHash)
	}
	return s.Create(ctx, tier, name)
}

// List returns every key without secrets.
func (s *Service) List(ctx context.Context) ([]db.APIKey, error) {
	return db.ListAPIKeys(ctx, s.idb)
}

// Revoke revokes the key named by its numeric id or by the secret itself.
// Revoking a revoked key is harmless.
func (s *Service) Revoke(ctx context.Context, idOrKey string) (db.APIKey, error) {
	id, err := s.resolveID(ctx, idOrKey)
	if err != nil {
		return db.APIKey{}, err
	}
	k, err := db.RevokeAPIKey(ctx, s.idb, id, s.opts.Now())
	if errors.Is(err, db.ErrNotFound) {
		return db.APIKey{}, apperr.Missing("key", id)
	}
	if err != nil {
		return db.APIKey{}, err
	}
	s.forget(k.KeyHash)
	return k, nil
}

// Revoked returns those of the keys ids that are revoked or do not exist:
// the live feeds of a key found here end (graph/live). It reads where
// Authenticate reads, the primary or, while it is away, the replica.
func (s *Service) Revoked(ctx context.Context, ids []int64) ([]int64, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	var out []int64
	err := s.src.read(ctx, func(ctx context.Context, idb bun.IDB) error {
		var err error
		out, err = db.RevokedAPIKeys(ctx, idb, ids)
		return err
	})
	return out, err
}

func (s *Service) resolveID(ctx context.Context, idOrKey string) (int64, error) {
	if strings.HasPrefix(idOrKey, Prefix) {
		hash := sha256.Sum256([]byte(idOrKey))
		k, err := db.APIKeyByHash(ctx, s.idb, hash[:])
		if errors.Is(err, db.ErrNotFound) {
			return 0, apperr.New(apperr.NotFound, "no such key")
		}
		return k.ID, err
	}
	id, err := strconv.ParseInt(idOrKey, 10, 64)
	if err != nil || id <= 0 {
		return 0, apperr.Invalid("key", "give a key id (a positive integer) or the key itself (%s…)", Prefix)
	}
	return id, nil
}

// Authenticate verifies a presented secret. A missing, malformed, unknown or
// revoked key gives ErrUnauthorized; database failures are returned as they are.
// A secret that no issued key has is refused without a query of its own (see
// Options.RefreshInterval); the others are looked up by hash, on the primary
// or, while it is away, on the replica. Results, good and bad, are cached
// for at most CacheTTL.
func (s *Service) Authenticate(ctx context.Context, secret string) (Principal, error) {
	if !wellFormed(secret) {
		return Principal{}, ErrUnauthorized
	}
	hash := sha256.Sum256([]byte(secret))
	now := s.opts.Now()
	if c, ok := s.lookup(hash, now); ok {
		if !c.valid {
			return Principal{}, ErrUnauthorized
		}
		return c.principal, nil
	}
	known, err := s.issued.contains(ctx, hash)
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	if !known {
		return Principal{}, ErrUnauthorized
	}
	var k db.APIKey
	err = s.src.read(ctx, func(ctx context.Context, idb bun.IDB) (err error) {
		k, err = db.APIKeyByHash(ctx, idb, hash[:])
		return err
	})
	switch {
	case errors.Is(err, db.ErrNotFound):
		s.store(hash, cached{expires: now.Add(s.opts.CacheTTL)})
		return Principal{}, ErrUnauthorized
	case err != nil:
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	// The row was found by its hash; compare again in constant time so the
	// decision never depends on a variable-time comparison.
	if subtle.ConstantTimeCompare(k.KeyHash, hash[:]) != 1 || k.RevokedAt != nil {
		s.store(hash, cached{expires: now.Add(s.opts.CacheTTL)})
		return Principal{}, ErrUnauthorized
	}
	p := Principal{KeyID: k.ID, Tier: k.Tier, Name: k.Name}
	s.store(hash, cached{principal: p, valid: true, expires: now.Add(s.opts.CacheTTL)})
	return p, nil
}

// wellFormed rejects obviously foreign strings before they cost a query.
func wellFormed(secret string) bool {
	if !strings.HasPrefix(secret, Prefix) || len(secret) != len(Prefix)+encoding.EncodedLen(secretBytes) {
		return false
	}
	_, err := encoding.DecodeString(secret[len(Prefix):])
	return err == nil
}

func (s *Service) lookup(hash [sha256.Size]byte, now time.Time) (cached, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.valid[hash]
	if !ok {
		c, ok = s.invalid[hash]
	}
	if !ok || !now.Before(c.expires) {
		return cached{}, false
	}
	return c, true
}

func (s *Service) store(hash [sha256.Size]byte, c cached) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.invalid
	if c.valid {
		m = s.valid
	}
	if len(m) >= s.opts.CacheSize {
		clear(m) // crude but bounded; entries live only seconds anyway
	}
	m[hash] = c
}

// forgetAll empties the cache, when the primary is back: what was verified
// on the replica meanwhile is verified again on the primary, so a
// revocation the replica had not seen yet counts at once.
func (s *Service) forgetAll() {
	s.mu.Lock()
	clear(s.valid)
	clear(s.invalid)
	s.mu.Unlock()
}

func (s *Service) forget(hash []byte) {
	var h [sha256.Size]byte
	copy(h[:], hash)
	s.mu.Lock()
	delete(s.valid, h)
	delete(s.invalid, h)
	s.mu.Unlock()
}
