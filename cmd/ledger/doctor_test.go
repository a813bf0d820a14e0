package main

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/internal/pgtest"
	"github.com/payledger/payledger/projections"
)

func TestDoctorCommand(t *testing.T) {
	pool := pgtest.NewPool(t)
	env := mapEnv(map[string]string{"LEDGER_DATABASE_URL": pool.Config().ConnString(), "LEDGER_LOG_LEVEL": "error"})
	ctx := t.Context()
	doctorRun := func(args ...string) (doctorReport, string, error) {
		t.Helper()
		var out bytes.Buffer
		err := run(ctx, append([]string{"doctor"}, args...), env, &out, io.Discard)
		var rep doctorReport
		if len(args) > 0 && args[0] == "--json" {
			if jerr := json.Unmarshal(out.Bytes(), &rep); jerr != nil {
				t.Fatalf("doctor --json printed %q: %v", out.String(), jerr)
			}
		}
		return rep, out.String(), err
	}

	rep, _, err := doctorRun("--json")
	if err != nil || !rep.OK || len(rep.Groups) != 0 {
		t.Fatalf("empty ledger: %+v, %v; want ok and nothing listed", rep, err)
	}
	if _, text, err := doctorRun(); err != nil || !strings.Contains(text, "nothing waits") {
		t.Errorf("empty ledger text = %q, %v", text, err)
	}

	// A dead letter of an hour ago: listed, not too old for the default 24h,
	// too old for --max-age 30m.
	if _, err := projections.NewDeadLetters(pool).Record(ctx, domain.DeadLetterFailure{Key: "job:7",
		Kind: domain.DeadLetterJob, Cause: "enrich", At: time.Now().Add(-time.Hour), Error: "status 500"}); err != nil {
		t.Fatal(err)
	}
	rep, _, err = doctorRun("--json")
	if err != nil || !rep.OK || len(rep.Groups) != 1 || rep.Groups[0].What != "dead_letter" || rep.Groups[0].Open != 1 || rep.Groups[0].TooOld {
		t.Fatalf("one fresh dead letter: %+v, %v", rep, err)
	}
	if age := rep.Groups[0].AgeSecs; age < 3500 || age > 3700 {
		t.Errorf("age = %vs, want about 3600", age)
	}
	rep, _, err = doctorRun("--json", "--max-age", "30m")
	if exitCode(err) != exitProblems || rep.OK || !rep.Groups[0].TooOld {
		t.Errorf("--max-age 30m: %+v, exit %d; want not ok and exit 1", rep, exitCode(err))
	}
	if _, text, err := doctorRun("--max-age", "30m"); exitCode(err) != exitProblems || !strings.Contains(text, "job enrich") ||
		!strings.Contains(text, "older than 30m0s") {
		t.Errorf("text report = %q, exit %d", text, exitCode(err))
	}
	if _, _, err := doctorRun("--max-age", "0s"); exitCode(err) != exitUsage {
		t.Errorf("--max-age 0s: exit %d, want %d", exitCode(err), exitUsage)
	}
}
