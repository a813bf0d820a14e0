package mercadopago

import (
	"testing"
	"time"
)

// BenchmarkVerify measures the worst accepted case too: an upper-case ID
// (two manifests) matched by the second of two secrets.
func BenchmarkVerify(b *testing.B) {
	now := time.Unix(1704908010, 0)
	const ord = "ORD01JQ4S4KY8HWQ6NA5PXB65B3D3"
	for _, bc := range []struct {
		name    string
		secrets []string
		id, sig string
	}{
		{name: "vector", secrets: []string{vectorSecret}, id: vectorDataID, sig: vectorHeader},
		{name: "rotation, re-cased id", secrets: []string{"new", vectorSecret}, id: ord,
			sig: Sign(vectorSecret, "ord01jq4s4ky8hwq6na5pxb65b3d3", vectorRequestID, vectorTS)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			p := newProvider(b, Config{Secrets: bc.secrets})
			h, q := headers(bc.sig, vectorRequestID), queryOf(bc.id)
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Verify(b.Context(), h, q, nil, now); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	body := vectorBody(b)
	p := newProvider(b, Config{Secrets: []string{vectorSecret}})
	h, q := headers(vectorHeader, vectorRequestID), queryOf(vectorDataID)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := p.Parse(b.Context(), h, q, body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkObserve(b *testing.B) {
	body := []byte(answer("1319876543210", "approved", "partially_refunded", "150.10", "50.05", "BRL", "2026-03-01T11:00:00.000-03:00"))
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := observe(body, "1319876543210", now); err != nil {
			b.Fatal(err)
		}
	}
}
