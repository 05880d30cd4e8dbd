package db_test

import (
	"context"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/db"
	"github.com/feedapi/feedapi/db/dbtest"
)

func TestMain(m *testing.M) { os.Exit(dbtest.Main(m)) }

func TestMigrateFromNothingIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewEmpty(t)

	var first strings.Builder
	if err := db.Migrate(ctx, url, &first); err != nil {
		t.Fatalf("first migrate: %v", err)
	}
	if !strings.Contains(first.String(), "applied") {
		t.Errorf("first migrate output = %q, want it to list applied migrations", first.String())
	}
	var second strings.Builder
	if err := db.Migrate(ctx, url, &second); err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if got, want := strings.TrimSpace(second.String()), "database is up to date"; got != want {
		t.Errorf("second migrate output = %q, want %q", got, want)
	}

	bdb, err := db.Open(url, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	for _, table := range []string{"posts", "briefs", "firehose_messages", "etf_flows", "api_keys"} {
		var n int
		if err := bdb.NewRaw("SELECT count(*) FROM ?", bunIdent(table)).Scan(ctx, &n); err != nil {
			t.Errorf("table %s: %v", table, err)
		}
	}
}

func TestMigrateConcurrentReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := dbtest.NewEmpty(t)

	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Migrate(ctx, url, &strings.Builder{})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("replica %d: %v", i, err)
		}
	}
	bdb, err := db.Open(url, db.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var applied int
	if err := bdb.NewRaw("SELECT count(*) FROM bun_migrations").Scan(ctx, &applied); err != nil {
		t.Fatal(err)
	}
	ups, err := fs.Glob(os.DirFS("migrations"), "*.up.sql")
	if err != nil {
		t.Fatal(err)
	}
	if applied != len(ups) {
		t.Errorf("bun_migrations rows = %d, want %d (each migration recorded once)", applied, len(ups))
	}
}

func TestMoneyRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"0", "0.00", false},
		{"-1234.5", "-1234.50", false},
		{"1500000000", "1500000000.00", false},
		{"12.34", "12.34", false},
		{"-0.07", "-0.07", false},
		{"1.234", "", true},
		{"1e9", "", true},
		{"", "", true},
		{"12.", "", true},
		{"abc", "", true},
	}
	for _, tt := range tests {
		m, err := db.ParseMoney(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("ParseMoney(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			continue
		}
		if err == nil && m.String() != tt.want {
			t.Errorf("ParseMoney(%q).String() = %q, want %q", tt.in, m.String(), tt.want)
		}
	}
}

func bunIdent(s string) any { return bun.Ident(s) }
