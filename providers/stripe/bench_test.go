package stripe

import (
	"os"
	"testing"
	"time"
)

func BenchmarkVerify(b *testing.B) {
	body := vectorBody(b)
	h := headerOf("t=1700000000,v1=" + vectorS1)
	now := time.Unix(vectorT, 0)
	for _, bc := range []struct {
		name    string
		secrets []string
	}{
		{name: "one secret", secrets: []string{vectorSecret}},
		{name: "rotation, second secret matches", secrets: []string{"whsec_new", vectorSecret}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newProvider(b, Config{Secrets: bc.secrets})
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if err := p.Verify(b.Context(), h, nil, body, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for _, file := range []string{"testdata/vectors/s1_payload.json", "testdata/events/charge.refunded.json", "testdata/events/customer.created.json"} {
		body, err := os.ReadFile(file)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(file[len("testdata/"):], func(b *testing.B) {
			p := newProvider(b, Config{Secrets: []string{vectorSecret}})
			h := headerOf("t=1700000000,v1=" + vectorS1)
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := p.Parse(b.Context(), h, nil, body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkVerifyProof is BenchmarkVerify's one-secret case through
// VerifyProof: the difference is what keeping the proof costs a delivery.
func BenchmarkVerifyProof(b *testing.B) {
	body := vectorBody(b)
	h := headerOf("t=1700000000,v1=" + vectorS1)
	p := newProvider(b, Config{Secrets: []string{vectorSecret}})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.VerifyProof(b.Context(), h, nil, body, time.Unix(vectorT, 0)); err != nil {
			b.Fatal(err)
		}
	}
}
