package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/ahp-go/ahp/host"
	"github.com/ahp-go/ahp/internal/metrics"
)

// opsConfig holds what an operator reaches besides the clients' endpoint:
// health, metrics and profiles.
type opsConfig struct {
	// MetricsNoToken lets /healthz, /readyz and /metrics answer requests
	// from loopback addresses without the token (a local scraper).
	MetricsNoToken bool `json:"metricsNoToken"`
	// DebugAddr, when set, is a loopback address serving net/http/pprof.
	DebugAddr string `json:"debugAddr"`
}

func (c *opsConfig) register(fs *flag.FlagSet) {
	fs.BoolVar(&c.MetricsNoToken, "metrics-no-token", c.MetricsNoToken, "let /healthz, /readyz and /metrics answer loopback requests without the token")
	fs.StringVar(&c.DebugAddr, "debug-addr", c.DebugAddr, "loopback address (e.g. 127.0.0.1:6060) serving Go profiles at /debug/pprof/; empty means none")
}

func (c *opsConfig) validate() error {
	if c.DebugAddr == "" {
		return nil
	}
	h, _, err := net.SplitHostPort(c.DebugAddr)
	if err != nil {
		return fmt.Errorf("--debug-addr %q: %w", c.DebugAddr, err)
	}
	if !isLoopback(h) {
		return fmt.Errorf("--debug-addr %s: profiles are served on a loopback address only (127.0.0.1, ::1 or localhost)", c.DebugAddr)
	}
	return nil
}

// opsRoutes serves /healthz, /readyz and /metrics behind the checks of the
// WebSocket endpoint (ws), and everything else with next.
func (c *opsConfig) opsRoutes(m *metrics.Metrics, ws *host.WebSocketOptions, next http.Handler) http.Handler {
	g := host.GuardOptions{LoopbackWithoutToken: c.MetricsNoToken}
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", host.Guard(ws, g, metrics.Healthz()))
	mux.Handle("GET /readyz", host.Guard(ws, g, m.Readyz()))
	mux.Handle("GET /metrics", host.Guard(ws, g, m.Handler()))
	mux.Handle("/", next)
	return mux
}

// debugServer serves net/http/pprof on its own mux at c.DebugAddr, until
// the returned stop is called. With no address it does nothing.
func (c *opsConfig) debugServer(log *slog.Logger) (stop func(), addr net.Addr, err error) {
	if c.DebugAddr == "" {
		return func() {}, nil, nil
	}
	ln, err := net.Listen("tcp", c.DebugAddr)
	if err != nil {
		return nil, nil, fmt.Errorf("--debug-addr: %w", err)
	}
	if ip, ok := ln.Addr().(*net.TCPAddr); !ok || !ip.IP.IsLoopback() {
		ln.Close()
		return nil, nil, fmt.Errorf("--debug-addr %s: listens on %s, which is not a loopback address", c.DebugAddr, ln.Addr())
	}
	srv := &http.Server{
		Handler:           debugMux(),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("the debug server stopped", "err", err)
		}
	}()
	log.Info("profiles served", "addr", ln.Addr().String(), "path", "/debug/pprof/")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-done
	}, ln.Addr(), nil
}

// debugMux routes net/http/pprof's handlers (never through
// http.DefaultServeMux).
func debugMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
