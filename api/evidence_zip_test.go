package api

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// checkEvidenceZip downloads path?format=zip and checks it as an auditor
// would: the manifest lists every fact the JSON answer does, each body file
// holds that fact's exact bytes, and every openssl command README.txt gives
// prints, run by sh in the unpacked folder with the secret, a v1 value it
// lists under the command.
func checkEvidenceZip(t *testing.T, srv http.Handler, path, secret string, want []map[string]any) {
	t.Helper()
	res := serve(t, srv, get(path+"?format=zip", readToken))
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/zip" ||
		!strings.HasPrefix(res.header.Get("Content-Disposition"), `attachment; filename="evidence-payment-stripe-`) {
		t.Fatalf("zip: %d %v", res.status, res.header)
	}
	dir := unzip(t, res.raw)
	var manifest Evidence
	raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	if len(manifest.Facts) != len(want) {
		t.Fatalf("manifest lists %d facts, the JSON answer %d", len(manifest.Facts), len(want))
	}
	for i, f := range manifest.Facts {
		if f.EventID != want[i]["event_id"] {
			t.Errorf("fact %d: %s, want %s", i, f.EventID, want[i]["event_id"])
		}
		body, _ := base64.StdEncoding.DecodeString(f.Delivery.Body)
		file, err := os.ReadFile(filepath.Join(dir, f.Delivery.BodyFile))
		if err != nil || !bytes.Equal(file, body) || len(body) == 0 {
			t.Errorf("fact %d: body file %q: %v (%d bytes, want %d)", i, f.Delivery.BodyFile, err, len(file), len(body))
		}
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if ran := runRecipes(t, dir, secret, string(readme)); ran != len(want) {
		t.Errorf("README gives %d openssl commands, want one per fact (%d):\n%s", ran, len(want), readme)
	}
}

// runRecipes runs each "$ " command of readme and checks its digest is one
// of the "v1 = " lines after it; it returns how many it ran.
func runRecipes(t *testing.T, dir, secret, readme string) int {
	t.Helper()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Fatalf("the README's recipe needs openssl (.ci/run installs it): %v", err)
	}
	ran := 0
	lines := strings.Split(readme, "\n")
	for i, line := range lines {
		cmdline, ok := strings.CutPrefix(strings.TrimSpace(line), "$ ")
		if !ok || !strings.Contains(cmdline, "STRIPE_WEBHOOK_SECRET") {
			continue
		}
		var v1s []string
		for _, next := range lines[i+1:] {
			v, ok := strings.CutPrefix(strings.TrimSpace(next), "v1 = ")
			if !ok {
				break
			}
			v1s = append(v1s, v)
		}
		cmd := exec.CommandContext(t.Context(), "sh", "-c", cmdline)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), "STRIPE_WEBHOOK_SECRET="+secret)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", cmdline, err)
		}
		// OpenSSL prints "SHA2-256(stdin)= <hex>" (3.x) or "(stdin)= <hex>".
		fields := strings.Fields(string(out))
		if len(fields) == 0 || !slices.Contains(v1s, fields[len(fields)-1]) {
			t.Errorf("%s printed %q, not one of %v", cmdline, out, v1s)
		}
		ran++
	}
	return ran
}

// unzip writes the zip's files under a new folder and returns it.
func unzip(t *testing.T, data []byte) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range zr.File {
		if !filepath.IsLocal(f.Name) {
			t.Fatalf("zip entry %q escapes its folder", f.Name)
		}
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, err = b.ReadFrom(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, f.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}
