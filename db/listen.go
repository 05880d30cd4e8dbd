package db

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
)

// ChangeChannel is the NOTIFY channel of the change triggers (migration
// 20261124100001_stream_positions).
const ChangeChannel = "feedapi_changes"

// Notice is one notification of the change triggers: a statement inserted
// or updated N rows of Kind ("posts", "firehose", "briefs", "etf_flows");
// MaxID is the largest id among them (0 for etf_flows).
type Notice struct {
	Kind  string `json:"kind"`
	N     int64  `json:"n"`
	MaxID int64  `json:"max_id"`
}

// ListenOptions configure Listen. Zero fields take the defaults noted.
type ListenOptions struct {
	// Logger receives connection losses and reconnections (default: discard).
	Logger *slog.Logger
	// MinBackoff and MaxBackoff bound the wait between reconnection
	// attempts, doubled after each failure (defaults 100ms and 5s).
	MinBackoff, MaxBackoff time.Duration
	// Connect opens the connection (default: pgx.Connect of the URL); tests
	// use it to count connections.
	Connect func(ctx context.Context, url string) (*pgx.Conn, error)
}

// Listen holds one connection to the database at url listening on
// ChangeChannel until ctx ends, and calls onNotice for each notification.
// After each (re)connection, once LISTEN is in place, it calls onConnect:
// notifications sent while no connection listened are lost, so the caller
// re-reads from the database whatever it keeps (a "catch up"). When the
// connection fails (a database restart, a network cut) it reconnects by
// itself with exponential backoff. The callbacks run on Listen's goroutine
// and must not block. It returns ctx's error.
func Listen(ctx context.Context, url string, opts ListenOptions, onConnect func(), onNotice func(Notice)) error {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.MinBackoff <= 0 {
		opts.MinBackoff = 100 * time.Millisecond
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 5 * time.Second
	}
	if opts.Connect == nil {
		opts.Connect = func(ctx context.Context, url string) (*pgx.Conn, error) {
			cfg, err := pgx.ParseConfig(url)
			if err != nil {
				return nil, err
			}
			if cfg.ConnectTimeout == 0 || cfg.ConnectTimeout > 5*time.Second {
				cfg.ConnectTimeout = 5 * time.Second
			}
			return pgx.ConnectConfig(ctx, cfg)
		}
	}
	backoff := opts.MinBackoff
	lost := false
	for {
		err := listenOnce(ctx, url, opts, func() {
			backoff = opts.MinBackoff
			if lost {
				opts.Logger.Info("change signal: listening again; consumers catch up from the database")
			}
			onConnect()
		}, onNotice)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !lost {
			opts.Logger.Warn("change signal: lost the listening connection; reconnecting", slog.Any("error", err))
		}
		lost = true
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, opts.MaxBackoff)
	}
}

// listenOnce connects, listens and waits for notifications until the
// connection fails or ctx ends.
func listenOnce(ctx context.Context, url string, opts ListenOptions, onConnect func(), onNotice func(Notice)) error {
	conn, err := opts.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // the connection is dropped either way
	if _, err := conn.Exec(ctx, "LISTEN "+ChangeChannel); err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	onConnect()
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return fmt.Errorf("wait for notification: %w", err)
		}
		var notice Notice
		if err := json.Unmarshal([]byte(n.Payload), &notice); err != nil || notice.Kind == "" {
			opts.Logger.Warn("change signal: unreadable notification", slog.String("payload", n.Payload))
			continue
		}
		onNotice(notice)
	}
}
