package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// startDebug serves Go's profiler (net/http/pprof) on a listener of its own
// when LEDGER_DEBUG_ADDR is set, never on the public one: profiles reveal
// internals. It returns the bound address ("" when off) and a stop.
func startDebug(addr string, logger *slog.Logger) (bound string, stop func(context.Context), err error) {
	if addr == "" {
		return "", func(context.Context) {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("debug listener %s: %w", addr, err)
	}
	if host, _, _ := net.SplitHostPort(addr); host == "" || !isLoopback(host) {
		logger.Warn("LEDGER_DEBUG_ADDR is not a loopback address: anyone who can reach it can profile this process", "addr", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Warn("debug listener stopped", "err", err)
		}
	}()
	logger.Info("debug listener (pprof)", "addr", ln.Addr().String())
	return ln.Addr().String(), func(ctx context.Context) { _ = srv.Shutdown(ctx) }, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
