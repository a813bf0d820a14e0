package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
	"github.com/payledger/payledger/eventstore/postgres"
	"github.com/payledger/payledger/internal/pgtest"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden files in testdata")

// replayStream is a Stripe payment whose facts arrived out of order, with a
// redelivery: the success first, then the creation (late), the success
// again from the status API (a repeat), then a partial refund.
func replayStream(t *testing.T) []eventstore.RecordedEvent {
	t.Helper()
	base := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	meta := func(evt string, min int) domain.Meta {
		return domain.Meta{Provider: "stripe", ProviderEventID: evt, ProviderEventType: "test", ProviderPaymentID: "pi_replay",
			OccurredAt: base.Add(time.Duration(min) * time.Minute)}
	}
	facts := []struct {
		e      domain.Event
		source string
	}{
		{&domain.PaymentSucceeded{Meta: meta("evt_succ", 10), Amount: 2000, AmountReceived: 2000, Currency: "USD"}, eventstore.SourceWebhook},
		{&domain.PaymentCreated{Meta: meta("evt_crea", 0), Amount: 2000, Currency: "USD"}, eventstore.SourceWebhook},
		{&domain.PaymentSucceeded{Meta: meta("evt_succ", 10), Amount: 2000, AmountReceived: 2000, Currency: "USD"}, eventstore.SourceAPI},
		{&domain.PaymentRefunded{Meta: meta("evt_refu", 30), AmountRefunded: 500, AmountCaptured: 2000, Currency: "USD"}, eventstore.SourceWebhook},
	}
	codec := eventstore.NewCodec()
	var recs []eventstore.RecordedEvent
	for i, f := range facts {
		d, err := codec.Encode(f.e, eventstore.Metadata{Provider: "stripe", Source: f.source, ReceivedAt: base.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		id := d.ID
		if i == 2 { // a second copy of a fact is a second stored event
			id = uuid.NewSHA1(d.ID, []byte("api"))
		}
		recs = append(recs, eventstore.RecordedEvent{ID: id, Stream: "payment-stripe-pi_replay", Revision: uint64(i), Type: d.Type,
			Data: d.Data, Metadata: d.Metadata, RecordedAt: base.Add(time.Hour + time.Duration(i)*time.Minute)})
	}
	return recs
}

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *updateGolden {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd/ledger -run %s -update to write it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", name, got)
	}
}

func TestReplayText(t *testing.T) {
	recs := replayStream(t)
	tests := []struct {
		golden string
		view   *domain.AsOf
	}{
		{"replay_now.golden", nil},
		{"replay_effective.golden", &domain.AsOf{At: time.Date(2026, 3, 2, 9, 15, 0, 0, time.UTC), Basis: domain.BasisEffective}},
		{"replay_recorded.golden", &domain.AsOf{At: time.Date(2026, 3, 2, 10, 1, 0, 0, time.UTC), Basis: domain.BasisRecorded}},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			rep, err := api.BuildReplay("stripe", "pi_replay", recs, eventstore.NewCodec(), tc.view)
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			printReplay(&out, rep)
			checkGolden(t, tc.golden, out.Bytes())
		})
	}
	if _, err := api.BuildReplay("stripe", "pi_replay", recs, eventstore.NewCodec(),
		&domain.AsOf{At: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}); domain.KindOf(err) != domain.KindNotFound {
		t.Errorf("before the first fact: %v, want not found", err)
	}
}

// TestReplayCommand runs `ledger replay` on Postgres: --json holds every
// stored event in fold order with the state, the flags are checked, and an
// unknown payment exits 1.
func TestReplayCommand(t *testing.T) {
	pool := pgtest.NewPool(t)
	store := postgres.New(pool, postgres.Options{})
	for _, rec := range replayStream(t) {
		if _, err := store.Append(t.Context(), rec.Stream, eventstore.Any(), []eventstore.EventData{{ID: rec.ID, Type: rec.Type,
			Data: rec.Data, Metadata: rec.Metadata}}); err != nil {
			t.Fatal(err)
		}
	}
	env := mapEnv(map[string]string{"LEDGER_DATABASE_URL": pool.Config().ConnString(), "LEDGER_LOG_LEVEL": "error"})
	replayRun := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(t.Context(), append([]string{"replay"}, args...), env, &out, io.Discard)
		return out.String(), err
	}
	out, err := replayRun("stripe", "pi_replay", "--json")
	if err != nil {
		t.Fatal(err)
	}
	validateSchema(t, "replay.schema.json", []byte(out))
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	var rep api.Replay
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(rep.Facts) != 4 || rep.Stored != 4 || rep.State.Status != domain.StatusPartiallyRefunded || rep.AsOf != nil ||
		rep.Facts[0].Type != domain.TypePaymentCreated || !rep.Facts[0].Late || !rep.Facts[2].Repeat || rep.Facts[3].Entries == nil {
		t.Errorf("--json report: %+v", rep)
	}
	for _, f := range rep.Facts {
		if len(f.Data) == 0 || f.EventID == "" || f.RecordedAt.IsZero() {
			t.Errorf("fact %d lacks its data, ID or stored time: %+v", f.N, f)
		}
	}
	if text, err := replayRun("--as-of", "2026-03-02T09:05:00Z", "stripe", "pi_replay"); err != nil ||
		!strings.Contains(text, "1 of 4 stored events") || !strings.Contains(text, "state: awaiting_confirmation") && !strings.Contains(text, "state: pending") {
		t.Errorf("as of 09:05: %v\n%s", err, text)
	}
	for _, args := range [][]string{{"stripe"}, {"stripe", "pi_replay", "extra"}, {"--as-of", "yesterday", "stripe", "pi_replay"},
		{"--basis", "recorded", "stripe", "pi_replay"}, {"--as-of", "2026-03-02T09:05:00Z", "--basis", "wall", "stripe", "pi_replay"}} {
		if _, err := replayRun(args...); exitCode(err) != exitUsage {
			t.Errorf("replay %v: exit %d (%v), want 2", args, exitCode(err), err)
		}
	}
	if _, err := replayRun("stripe", "pi_unknown"); exitCode(err) != exitProblems {
		t.Errorf("unknown payment: exit %d (%v), want 1", exitCode(err), err)
	}
}
