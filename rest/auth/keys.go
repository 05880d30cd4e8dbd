package auth

import (
	"context"
	"crypto/sha256"
	"strings"
	"sync"
	"time"

	"github.com/feedapi/feedapi/graph/keys"
	"github.com/feedapi/feedapi/rest/accesslog"
)

// Authenticator verifies API keys. Authenticate returns an *apperr.Error
// with Code Unauthorized for a missing, invalid or revoked key; any other
// error is internal. keys.Service implements it.
type Authenticator interface {
	Authenticate(ctx context.Context, secret string) (keys.Principal, error)
}

// unauthorizedMessage is the message of every 401.
const unauthorizedMessage = "API key is missing, invalid or revoked"

// bearer returns the credentials of a single `Authorization: Bearer <key>`
// header; the scheme name is case-insensitive.
func bearer(headers []string) (string, bool) {
	if len(headers) != 1 {
		return "", false
	}
	scheme, secret, ok := strings.Cut(headers[0], " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	secret = strings.Trim(secret, " \t")
	if secret == "" || strings.ContainsAny(secret, " \t") {
		return "", false
	}
	return secret, true
}

// verifiedKeysTTL is how long a key stays known after it last verified:
// long enough that a client polling every few seconds or minutes stays
// known. Knowing a key only lets it be looked up (and so revoked keys are
// still refused) while its IP's failed-authentication budget is spent.
const verifiedKeysTTL = 10 * time.Minute

// verifiedKeysSize bounds the keys remembered; when full they are
// forgotten at once (crude, but bounded, and only valid keys get in).
const verifiedKeysSize = 100000

// verifiedKeys remembers the SHA-256 of the keys this replica verified
// recently, so that a spent failed-authentication budget of their client
// IP does not lock them out.
type verifiedKeys struct {
	mu   sync.Mutex
	seen map[[sha256.Size]byte]time.Time // last verified
}

func newVerifiedKeys() *verifiedKeys {
	return &verifiedKeys{seen: map[[sha256.Size]byte]time.Time{}}
}

func (v *verifiedKeys) has(secret string) bool {
	h := sha256.Sum256([]byte(secret))
	v.mu.Lock()
	defer v.mu.Unlock()
	at, ok := v.seen[h]
	return ok && time.Since(at) < verifiedKeysTTL
}

func (v *verifiedKeys) add(secret string) {
	h := sha256.Sum256([]byte(secret))
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.seen) >= verifiedKeysSize {
		clear(v.seen)
	}
	v.seen[h] = time.Now()
}

func (v *verifiedKeys) forget(secret string) {
	h := sha256.Sum256([]byte(secret))
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.seen, h)
}

// observedKeys notes the key of every successful authentication in the
// request's access log record, so that the access log reports the key's id
// and tier (never the key) whichever route looked it up.
type observedKeys struct {
	Authenticator
}

// Authenticate implements Authenticator.
func (k observedKeys) Authenticate(ctx context.Context, secret string) (keys.Principal, error) {
	p, err := k.Authenticator.Authenticate(ctx, secret)
	if err == nil {
		accesslog.Of(ctx).NoteKey(p.KeyID, string(p.Tier))
	}
	return p, err
}
