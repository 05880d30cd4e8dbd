package db

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// InsertAPIKey stores a new key and fills in its id and creation time.
func InsertAPIKey(ctx context.Context, idb bun.IDB, k *APIKey) error {
	if _, err := idb.NewInsert().Model(k).Returning("id, created_at").Exec(ctx); err != nil {
		return fmt.Errorf("insert api key: %w", err)
	}
	return nil
}

// APIKeyByHash returns the key with the given secret hash, revoked or not.
func APIKeyByHash(ctx context.Context, idb bun.IDB, hash []byte) (APIKey, error) {
	var k APIKey
	err := idb.NewSelect().Model(&k).Where("key_hash = ?", hash).Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return APIKey{}, ErrNotFound
	}
	if err != nil {
		return APIKey{}, fmt.Errorf("look up api key: %w", err)
	}
	return k, nil
}

// ListAPIKeys returns every key, oldest first.
func ListAPIKeys(ctx context.Context, idb bun.IDB) ([]APIKey, error) {
	var ks []APIKey
	if err := idb.NewSelect().Model(&ks).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list api keys: %w", err)
	}
	return ks, nil
}

// RevokeAPIKey marks the key revoked at the given time, unless it already is,
// and returns it. A missing key gives ErrNotFound.
func RevokeAPIKey(ctx context.Context, idb bun.IDB, id int64, at time.Time) (APIKey, error) {
	var k APIKey
	err := idb.NewUpdate().Model(&k).
		Set("revoked_at = coalesce(revoked_at, ?)", at).
		Where("id = ?", id).
		Returning("*").
		Scan(ctx)
	if errors.Is(err, sql.ErrNoRows) {
		return APIKey{}, ErrNotFound
	}
	if err != nil {
		return APIKey{}, fmt.Errorf("revoke api key %d: %w", id, err)
	}
	return k, nil
}

// RevokeAPIKeysNamed revokes every unrevoked key with the given name at the
// given time and returns them.
func RevokeAPIKeysNamed(ctx context.Context, idb bun.IDB, name string, at time.Time) ([]APIKey, error) {
	var ks []APIKey
	err := idb.NewUpdate().Model((*APIKey)(nil)).
		Set("revoked_at = ?", at).
		Where("name = ? AND revoked_at IS NULL", name).
		Returning("*").
		Scan(ctx, &ks)
	if err != nil {
		return nil, fmt.Errorf("revoke api keys named %q: %w", name, err)
	}
	return ks, nil
}

// APIKeyHash is the id and secret hash of a key: what it takes to know
// whether a presented secret was ever issued.
type APIKeyHash struct {
	bun.BaseModel `bun:"table:api_keys"`

	ID      int64  `bun:"id,pk"`
	KeyHash []byte `bun:"key_hash"`
}

// APIKeyHashesAfter returns the ids and hashes of the keys whose id is
// greater than after, in id order: all of them from 0, only the new ones
// from the largest id seen (a range scan of the primary key).
func APIKeyHashesAfter(ctx context.Context, idb bun.IDB, after int64) ([]APIKeyHash, error) {
	var ks []APIKeyHash
	if err := idb.NewSelect().Model(&ks).Column("id", "key_hash").Where("id > ?", after).Order("id").Scan(ctx); err != nil {
		return nil, fmt.Errorf("list api key hashes after %d: %w", after, err)
	}
	return ks, nil
}

// RevokedAPIKeys returns those of ids whose key is revoked or does not
// exist, in the order of ids.
func RevokedAPIKeys(ctx context.Context, idb bun.IDB, ids []int64) ([]int64, error) {
	var active []int64
	err := idb.NewSelect().Model((*APIKey)(nil)).Column("id").
		Where("id IN (?)", bun.List(ids)).Where("revoked_at IS NULL").Scan(ctx, &active)
	if err != nil {
		return nil, fmt.Errorf("revoked api keys: %w", err)
	}
	live := make(map[int64]bool, len(active))
	for _, id := range active {
		live[id] = true
	}
	var out []int64
	for _, id := range ids {
		if !live[id] {
			out = append(out, id)
		}
	}
	return out, nil
}
