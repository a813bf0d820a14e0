// Package pgtest gives tests a fresh, migrated Postgres database of their own.
// It talks to a real server (PGTEST_URL, default the local trust-auth one);
// there is no fake database in payledger's tests.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/payledger/payledger/migrations"
)

// DefaultURL is the server tests use when PGTEST_URL is unset: the local
// Postgres that .ci/run starts.
const DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// AdminURL returns the URL of the maintenance database tests create theirs from.
func AdminURL() string {
	if u := os.Getenv("PGTEST_URL"); u != "" {
		return u
	}
	return DefaultURL
}

// NewDatabase creates an empty database, drops it when the test ends, and
// returns its URL.
func NewDatabase(t testing.TB) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin, err := pgx.Connect(ctx, AdminURL())
	if err != nil {
		t.Fatalf("pgtest: connect to %s (is Postgres running? .ci/run starts it): %v", AdminURL(), err)
	}
	defer admin.Close(context.Background())
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "payledger_test_" + hex.EncodeToString(b[:])
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, AdminURL())
		if err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
		}
	})
	u, err := url.Parse(AdminURL())
	if err != nil {
		t.Fatalf("pgtest: parse %s: %v", AdminURL(), err)
	}
	u.Path = "/" + name
	return u.String()
}

// NewPool creates a fresh database, applies every migration, and returns a
// pool on it that is closed when the test ends.
func NewPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool := NewEmptyPool(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	m, err := migrations.New(pool)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	defer m.Close()
	if _, err := m.Up(ctx); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return pool
}

// NewEmptyPool creates a fresh database without migrations and returns a pool
// on it that is closed when the test ends.
func NewEmptyPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dbURL := NewDatabase(t)
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatalf("pgtest: pool: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}
