package keys

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"errors"
	"fmt"
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
}

// Service issues, lists, revokes and verifies keys.
type Service struct {
	idb  bun.IDB
	opts Options

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
	return &Service{idb: idb, opts: opts,
		valid: make(map[[sha256.Size]byte]cached), invalid: make(map[[sha256.Size]byte]cached)}
}

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
	return secret, key, nil
}

// MaxNameLength is the longest key name, in characters.
const MaxNameLength = 200

// checkName refuses names that would break a listing: control characters
// (newlines, tabs, escapes), invalid UTF-8, or more than MaxNameLength characters.
func checkName(name string) error {
	if !utf8.ValidString(name) || utf8.RuneCountInString(name) > MaxNameLength ||
		strings.IndexFunc(name, unicode.IsControl) >= 0 {
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
// Results, good and bad, are cached for at most CacheTTL.
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
	k, err := db.APIKeyByHash(ctx, s.idb, hash[:])
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

func (s *Service) forget(hash []byte) {
	var h [sha256.Size]byte
	copy(h[:], hash)
	s.mu.Lock()
	delete(s.valid, h)
	delete(s.invalid, h)
	s.mu.Unlock()
}
