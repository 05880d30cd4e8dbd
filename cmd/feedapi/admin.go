package main

import (
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/uptrace/bun"

	"github.com/feedapi/feedapi/rest"
)

// startAdmin starts the admin listener of --admin-addr, with the metrics
// of the REST layer (returned, for rest.Config.Metrics) and of the
// connection pools of primary and replica (nil when there is none). Without
// --admin-addr there is no listener and no metrics. stop closes the
// listener.
func (c serveFlags) startAdmin(log *slog.Logger, primary, replica *bun.DB) (_ *rest.Metrics, stop func(), _ error) {
	if c.AdminAddr == "" {
		return nil, func() {}, nil
	}
	pools := map[string]*sql.DB{"primary": primary.DB}
	if replica != nil {
		pools["replica"] = replica.DB
	}
	reg, m, err := newRegistry(pools)
	if err != nil {
		return nil, nil, err
	}
	stop, err = serveAdmin(c.AdminAddr, adminHandler(reg, log), log)
	if err != nil {
		return nil, nil, err
	}
	return m, stop, nil
}

// newRegistry returns the registry of the service's metrics: the REST
// layer's (returned, for rest.Config.Metrics), the connection pool of each
// named database (go_sql_* with label db_name), the Go runtime and the
// process, and feedapi_build_info.
func newRegistry(pools map[string]*sql.DB) (*prometheus.Registry, *rest.Metrics, error) {
	reg := prometheus.NewRegistry()
	buildInfo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "feedapi_build_info",
		Help:        "Always 1; the label version is the build version of this replica.",
		ConstLabels: prometheus.Labels{"version": version()},
	})
	buildInfo.Set(1)
	cs := []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		buildInfo,
	}
	for name, pool := range pools {
		cs = append(cs, collectors.NewDBStatsCollector(pool, name))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	m, err := rest.NewMetrics(reg)
	if err != nil {
		return nil, nil, err
	}
	return reg, m, nil
}

// adminHandler serves the operators' endpoints: /metrics (Prometheus text
// format) from reg, and the runtime profiles under /debug/pprof/. The pprof
// handlers are mounted here explicitly; net/http/pprof also registers them
// on http.DefaultServeMux when imported, but nothing in feedapi serves that
// mux. /debug/pprof/cmdline is left out: the command line may hold a
// database password.
func adminHandler(reg *prometheus.Registry, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelError),
	}))
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("POST /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	return mux
}

// serveAdmin opens the admin listener on addr and serves h on it until
// the returned stop is called. It logs "serving admin" with the address,
// and a warning when that address is not a loopback one (0.0.0.0, a
// pod's address): the profiles tell much about the process and cost CPU.
// The server has no write timeout: a CPU profile or trace runs as long as
// its seconds parameter asks.
func serveAdmin(addr string, h http.Handler, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("admin listener: %w", err)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	log.Info("serving admin", slog.String("addr", ln.Addr().String()), slog.String("paths", "/metrics /debug/pprof/"))
	if tcp, ok := ln.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() {
		log.Warn("admin listener is not on a loopback address: /metrics and /debug/pprof/ answer, without authentication, whoever can reach it; bind it to 127.0.0.1, or let only Prometheus in with a network policy",
			slog.String("addr", ln.Addr().String()))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			log.Error("admin listener failed", slog.Any("error", err))
		}
	}()
	return func() {
		_ = srv.Close()
		<-done
	}, nil
}
