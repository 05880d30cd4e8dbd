package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/feedapi/feedapi/db/dbtest"
)

// keysRun runs a keys command in-process against dbURL.
func keysRun(t *testing.T, dbURL string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(append([]string{"--database-url", dbURL, "keys"}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestKeysCommands(t *testing.T) {
	t.Parallel()
	bdb, dbURL := dbtest.NewWithURL(t)

	if code, _, stderr := keysRun(t, dbURL, "create", "--tier", "free", "--name", "bot\nfake row"); code == 0 || !strings.Contains(stderr, "name must be") {
		t.Errorf("create with a newline in the name: exit %d, stderr %q; want a refusal that names the name", code, stderr)
	}
	code, stdout, stderr := keysRun(t, dbURL, "create", "--tier", "pro", "--name", "Ana's bot")
	if code != 0 {
		t.Fatalf("create: exit %d: %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	secret := lines[len(lines)-1]
	if code, _, stderr := keysRun(t, dbURL, "revoke", secret); code != 0 {
		t.Fatalf("revoke: exit %d: %s", code, stderr)
	}
	// A name written before names were checked must not break the table.
	if _, err := bdb.ExecContext(context.Background(),
		"INSERT INTO api_keys (key_hash, prefix, tier, name) VALUES (sha256('x'), 'fapi_xxxxxx', 'free', E'old\\tname\\nsecond line')"); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr = keysRun(t, dbURL, "list", "--json")
	if code != 0 {
		t.Fatalf("list --json: exit %d: %s", code, stderr)
	}
	var listed []map[string]any
	if err := json.Unmarshal([]byte(stdout), &listed); err != nil {
		t.Fatalf("list --json is not a JSON array: %v\n%s", err, stdout)
	}
	byName := map[string]map[string]any{}
	for _, k := range listed {
		name, _ := k["name"].(string)
		byName[name] = k
	}
	ana, ok := byName["Ana's bot"]
	if !ok || ana["tier"] != "pro" || ana["revoked_at"] == nil || !strings.HasPrefix(ana["prefix"].(string), "fapi_") {
		t.Errorf("list --json: Ana's bot = %v, want tier pro, a prefix and revoked_at set", ana)
	}
	if old, ok := byName["old\tname\nsecond line"]; !ok || old["revoked_at"] != nil {
		t.Errorf("list --json: the old name = %v, want it exact and unrevoked", old)
	}
	if strings.Contains(stdout, secret) {
		t.Error("list --json shows a secret")
	}

	code, stdout, stderr = keysRun(t, dbURL, "list")
	if code != 0 {
		t.Fatalf("list: exit %d: %s", code, stderr)
	}
	rows := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(rows) != 3 {
		t.Fatalf("list: %d lines, want a header and one line per key:\n%s", len(rows), stdout)
	}
	if !strings.Contains(rows[2], `"old\tname\nsecond line"`) {
		t.Errorf("list: the old name's row is %q, want the name quoted with escapes", rows[2])
	}
}
