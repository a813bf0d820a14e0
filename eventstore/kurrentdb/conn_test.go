package kurrentdb

import (
	"strings"
	"testing"
)

func TestEsdbScheme(t *testing.T) {
	tests := []struct{ in, want string }{
		{"esdb://127.0.0.1:2113?tls=false", "esdb://127.0.0.1:2113?tls=false"},
		{"kurrentdb://127.0.0.1:2113?tls=false", "esdb://127.0.0.1:2113?tls=false"},
		{"kurrent://admin:changeit@db-1:2113", "esdb://admin:changeit@db-1:2113"},
		{"KurrentDB://db-1:2113", "esdb://db-1:2113"},
		{"kurrentdb+discover://db.example:2113", "esdb+discover://db.example:2113"},
		{"kurrent+discover://db-1:2113,db-2:2113", "esdb+discover://db-1:2113,db-2:2113"},
		{"esdb+discover://db-1:2113", "esdb+discover://db-1:2113"},
		{"http://db-1:2113", "http://db-1:2113"},
		{"db-1:2113", "db-1:2113"},
	}
	for _, tt := range tests {
		if got := esdbScheme(tt.in); got != tt.want {
			t.Errorf("esdbScheme(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestOpenParses(t *testing.T) {
	tests := []struct {
		name    string
		conn    string
		wantErr bool
	}{
		{name: "esdb", conn: "esdb://127.0.0.1:1?tls=false"},
		{name: "kurrentdb", conn: "kurrentdb://127.0.0.1:1?tls=false&maxDiscoverAttempts=1"},
		{name: "kurrent-discover", conn: "kurrent+discover://127.0.0.1:1,127.0.0.1:2?tls=false"},
		{name: "other-scheme", conn: "http://127.0.0.1:1", wantErr: true},
		{name: "unparsable", conn: "kurrentdb://admin:s3cr3t-pw@[::1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(t.Context(), tt.conn, Options{})
			if tt.wantErr {
				if err == nil {
					_ = s.Close()
					t.Fatalf("Open(%q) succeeded, want an error", tt.conn)
				}
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Fatalf("Open error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tt.conn, err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("close: %v", err)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("second close: %v", err)
			}
		})
	}
}
