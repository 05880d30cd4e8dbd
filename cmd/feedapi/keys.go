package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/graph/keys"
)

// keysCmd groups the key-management commands.
type keysCmd struct {
	Create keysCreateCmd `cmd:"" help:"Create a key; the key itself is printed once, alone on the last line of stdout."`
	List   keysListCmd   `cmd:"" help:"List keys (never their secrets)."`
	Revoke keysRevokeCmd `cmd:"" help:"Revoke a key by its id or by the key itself; effective on every replica within 5 seconds."`
}

type keysCreateCmd struct {
	Tier string `required:"" enum:"free,pro,internal" help:"Tier of the key: free, pro or internal."`
	Name string `help:"Who or what the key is for."`
}

// Run implements the command.
func (c keysCreateCmd) Run(ctx context.Context, g *globals) error {
	bdb, err := g.open(false)
	if err != nil {
		return err
	}
	defer bdb.Close()
	secret, key, err := keys.NewService(bdb, keys.Options{}).Create(ctx, db.Tier(c.Tier), c.Name)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "created key %d (tier %s, name %q); store it now, it is not shown again:\n%s\n",
		key.ID, key.Tier, key.Name, secret)
	return nil
}

type keysListCmd struct {
	JSON bool `name:"json" help:"Print a JSON array (id, prefix, tier, name, created_at, revoked_at) for scripts."`
}

// listedKey is one key as keys list --json prints it.
type listedKey struct {
	ID        int64      `json:"id"`
	Prefix    string     `json:"prefix"`
	Tier      db.Tier    `json:"tier"`
	Name      string     `json:"name"`
	CreatedAt time.Time  `json:"created_at"`
	RevokedAt *time.Time `json:"revoked_at"`
}

// Run implements the command.
func (c keysListCmd) Run(ctx context.Context, g *globals) error {
	bdb, err := g.open(false)
	if err != nil {
		return err
	}
	defer bdb.Close()
	list, err := keys.NewService(bdb, keys.Options{}).List(ctx)
	if err != nil {
		return err
	}
	if c.JSON {
		out := make([]listedKey, 0, len(list))
		for _, k := range list {
			lk := listedKey{ID: k.ID, Prefix: k.Prefix, Tier: k.Tier, Name: k.Name, CreatedAt: k.CreatedAt.UTC()}
			if k.RevokedAt != nil {
				at := k.RevokedAt.UTC()
				lk.RevokedAt = &at
			}
			out = append(out, lk)
		}
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	w := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tPREFIX\tTIER\tNAME\tCREATED\tREVOKED")
	for _, k := range list {
		revoked := "-"
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%d\t%s…\t%s\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Tier, listedName(k.Name), k.CreatedAt.UTC().Format(time.RFC3339), revoked)
	}
	return w.Flush()
}

// listedName keeps one key on one row of the table: a name that is not
// keys.PlainName (written before names were checked) is shown quoted,
// with Go escapes; an empty name is shown as "-".
func listedName(name string) string {
	if name == "" {
		return "-"
	}
	if !keys.PlainName(name) {
		return strconv.Quote(name)
	}
	return name
}

type keysRevokeCmd struct {
	IDOrKey string `arg:"" name:"id-or-key" help:"The key's numeric id (see 'keys list') or the key itself."`
}

// Run implements the command.
func (c keysRevokeCmd) Run(ctx context.Context, g *globals) error {
	bdb, err := g.open(false)
	if err != nil {
		return err
	}
	defer bdb.Close()
	k, err := keys.NewService(bdb, keys.Options{}).Revoke(ctx, c.IDOrKey)
	if err != nil {
		return err
	}
	fmt.Fprintf(g.stdout, "revoked key %d (tier %s, name %q) at %s\n", k.ID, k.Tier, k.Name, k.RevokedAt.UTC().Format(time.RFC3339))
	return nil
}
