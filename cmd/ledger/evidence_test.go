package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/payledger/payledger/api"
	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/eventstore"
)

// TestEvidenceText: the text form of `ledger evidence`, one fact of each
// kind (verified and sealed, verified by a rotated secret and not sealed
// yet, unverifiable with its reason, failed with a broken link).
func TestEvidenceText(t *testing.T) {
	yes, no := true, false
	hash := strings.Repeat("ab", 32)
	sealed := func(intact *bool) api.EvidenceChain {
		return api.EvidenceChain{Previous: hash, Hash: hash, Sealed: &hash, SealedAt: ptr("2026-03-02T10:00:05Z"), Intact: intact}
	}
	fact := func(rev uint64, typ, evt, source string, v domain.Authenticity, c api.EvidenceChain) api.EvidenceFact {
		return api.EvidenceFact{Revision: rev, EventID: "0b6f3c8e-3a55-5d8e-9a43-6f1c1c1f0a0" + string(rune('0'+rev)), Type: typ,
			ProviderEventID: evt, Source: source, Verification: v, Chain: c,
			Delivery: api.EvidenceDelivery{ReceivedAt: "2026-03-02T10:00:0" + string(rune('0'+rev)) + "Z"}}
	}
	ev := api.Evidence{Provider: "stripe", ProviderPaymentID: "pi_ev", Stream: "payment-stripe-pi_ev", GeneratedAt: "2026-03-02T11:00:00Z",
		Facts: []api.EvidenceFact{
			fact(0, domain.TypePaymentCreated, "evt_1", "webhook", domain.Authenticity{Result: domain.AuthVerified, SecretID: "sha256:0123456789abcdef"}, sealed(&yes)),
			fact(1, domain.TypePaymentSucceeded, "evt_2", "webhook", domain.Authenticity{Result: domain.AuthVerifiedRotated,
				Reason: "matched the 2nd configured secret", SecretID: "sha256:fedcba9876543210"}, api.EvidenceChain{Previous: hash, Hash: hash}),
			fact(2, domain.TypePaymentSucceeded, "evt_2", "api", domain.Authenticity{Result: domain.AuthUnverifiable,
				Reason: "fetched from the provider's API (source api)"}, sealed(&yes)),
			fact(3, domain.TypePaymentRefunded, "evt_3", "webhook", domain.Authenticity{Result: domain.AuthFailed,
				Reason: "the secret that verified it at receipt does not match now", SecretID: "sha256:0123456789abcdef"}, sealed(&no)),
		}}
	var out bytes.Buffer
	printEvidence(&out, ev, "pi_ev.zip")
	checkGolden(t, "evidence.golden", out.Bytes())
	if failed, broken := evidenceProblems(ev); failed != 1 || broken != 1 {
		t.Errorf("problems: %d failed, %d broken, want 1 and 1", failed, broken)
	}
}

func ptr[T any](v T) *T { return &v }

// TestEvidenceCommand (issue 19, evidence): deliveries taken by a real
// `ledger serve` and sealed by its projector, then `ledger evidence`: --json
// matches its schema and re-verifies each delivery (the second configured
// secret reads as rotated), --out writes a zip whose manifest lists every
// fact with its body, a configuration without the secret reads
// unverifiable, and a body altered by SQL reads failed with exit status 1.
func TestEvidenceCommand(t *testing.T) {
	db := newDB(t)
	l := startLedger(t, baseEnv(db))
	const id = "pi_evidence_1"
	now := time.Now()
	for i, e := range []stripeEvent{piEvent("evt_ev_1", "payment_intent.created", id, now.Unix()-60, 2500),
		piEvent("evt_ev_2", "payment_intent.succeeded", id, now.Unix()-30, 2500)} {
		secret := []string{secretOld, secretNew}[i]
		if code, body := l.webhook(t, e.body(), secret, now); code != 200 {
			t.Fatalf("%s: %d %v", e.ID, code, body)
		}
	}
	env := map[string]string{"LEDGER_DATABASE_URL": db, "LEDGER_LOG_LEVEL": "error", "LEDGER_STRIPE_WEBHOOK_SECRETS": secretOld + "," + secretNew}
	evidenceRun := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(t.Context(), append([]string{"evidence"}, args...), mapEnv(env), &out, io.Discard)
		return out.String(), err
	}
	ev := waitSealed(t, func() (string, error) { return evidenceRun("stripe", id, "--json") })
	if len(ev.Facts) != 2 || ev.Facts[0].Verification.Result != domain.AuthVerified ||
		ev.Facts[1].Verification.Result != domain.AuthVerifiedRotated || ev.Facts[0].Receipt == nil {
		t.Errorf("evidence: %+v", ev.Facts)
	}

	zipPath := filepath.Join(t.TempDir(), "e.zip")
	if text, err := evidenceRun("stripe", id, "--out", zipPath); err != nil || !strings.Contains(text, "wrote "+zipPath) ||
		!strings.Contains(text, "verified_with_rotated_secret") {
		t.Fatalf("--out: %v\n%s", err, text)
	}
	checkZip(t, zipPath, ev)

	env["LEDGER_STRIPE_WEBHOOK_SECRETS"] = "whsec_someone_else"
	if out, err := evidenceRun("stripe", id, "--json"); err != nil || strings.Count(out, `"result": "unverifiable"`) != 2 {
		t.Errorf("secret rotated away: %v\n%s", err, out)
	}
	env["LEDGER_STRIPE_WEBHOOK_SECRETS"] = secretOld + "," + secretNew
	alterBody(t, db, eventstore.PaymentStream("stripe", id))
	if text, err := evidenceRun("stripe", id); exitCode(err) != exitProblems || !strings.Contains(text, " failed ") ||
		!strings.Contains(text, "BROKEN") {
		t.Errorf("altered body: exit %d (%v)\n%s", exitCode(err), err, text)
	}
	for _, args := range [][]string{{"stripe"}, {"paypal", id}, {"stripe", id, "extra"}} {
		if _, err := evidenceRun(args...); exitCode(err) != exitUsage {
			t.Errorf("evidence %v: exit %d (%v), want 2", args, exitCode(err), err)
		}
	}
	if _, err := evidenceRun("stripe", "pi_unknown"); exitCode(err) != exitProblems {
		t.Errorf("unknown payment: exit %d (%v), want 1", exitCode(err), err)
	}
}

// waitSealed runs evidence --json until every fact is sealed, checking the
// output against its schema.
func waitSealed(t *testing.T, evidence func() (string, error)) api.Evidence {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err := evidence()
		if err != nil {
			t.Fatalf("evidence --json: %v\n%s", err, out)
		}
		validateSchema(t, "evidence.schema.json", []byte(out))
		var ev api.Evidence
		if err := json.Unmarshal([]byte(out), &ev); err != nil {
			t.Fatal(err)
		}
		sealed := len(ev.Facts) > 0
		for _, f := range ev.Facts {
			sealed = sealed && f.Chain.Intact != nil && *f.Chain.Intact
		}
		if sealed {
			return ev
		}
		if time.Now().After(deadline) {
			t.Fatalf("not sealed within 20s: %s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func checkZip(t *testing.T, path string, ev api.Evidence) {
	t.Helper()
	zr, err := zip.OpenReader(path)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string]*zip.File{}
	for _, f := range zr.File {
		files[f.Name] = f
	}
	mf, ok := files["manifest.json"]
	if !ok || files["README.txt"] == nil {
		t.Fatalf("zip holds %v", files)
	}
	r, err := mf.Open()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(r)
	r.Close()
	validateSchema(t, "evidence.schema.json", raw)
	var manifest api.Evidence
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Facts) != len(ev.Facts) {
		t.Fatalf("manifest lists %d facts, want %d", len(manifest.Facts), len(ev.Facts))
	}
	for i, f := range manifest.Facts {
		if f.EventID != ev.Facts[i].EventID || files[f.Delivery.BodyFile] == nil {
			t.Errorf("manifest fact %d: %s with body %q", i, f.EventID, f.Delivery.BodyFile)
		}
	}
}

// alterBody changes the kept body of the stream's last event by SQL.
func alterBody(t *testing.T, db, stream string) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	tag, err := conn.Exec(t.Context(), `UPDATE es_events SET metadata = jsonb_set(metadata, '{raw_body}',
		to_jsonb(encode(convert_to(replace(convert_from(decode(metadata->>'raw_body', 'base64'), 'UTF8'), '2500', '2600'), 'UTF8'), 'base64')))
		WHERE stream = $1 AND revision = (SELECT max(revision) FROM es_events WHERE stream = $1)`, stream)
	if err != nil || tag.RowsAffected() != 1 {
		t.Fatalf("alter: %v (%d rows)", err, tag.RowsAffected())
	}
}
