package main

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
)

func TestDebugListener(t *testing.T) {
	t.Run("off", func(t *testing.T) {
		addr, stop, err := startDebug("", slog.New(slog.DiscardHandler))
		if err != nil || addr != "" {
			t.Fatalf("startDebug(\"\") = %q, %v; want nothing", addr, err)
		}
		stop(context.Background())
	})
	t.Run("serves pprof", func(t *testing.T) {
		var logs bytes.Buffer
		addr, stop, err := startDebug("127.0.0.1:0", slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer stop(context.Background())
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/goroutine?debug=1", "/debug/pprof/cmdline"} {
			resp, err := http.Get("http://" + addr + path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("GET %s = %d", path, resp.StatusCode)
			}
		}
		if strings.Contains(logs.String(), "not a loopback") {
			t.Errorf("loopback address warned about:\n%s", logs.String())
		}
	})
	t.Run("warns off loopback", func(t *testing.T) {
		var logs bytes.Buffer
		_, stop, err := startDebug(":0", slog.New(slog.NewTextHandler(&logs, nil)))
		if err != nil {
			t.Fatal(err)
		}
		stop(context.Background())
		if !strings.Contains(logs.String(), "not a loopback") {
			t.Errorf("no warning for a wildcard address:\n%s", logs.String())
		}
	})
	t.Run("bad address", func(t *testing.T) {
		if _, _, err := startDebug("127.0.0.1:notaport", slog.New(slog.DiscardHandler)); err == nil {
			t.Error("want an error")
		}
	})
}
