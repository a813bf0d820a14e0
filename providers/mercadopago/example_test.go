package mercadopago_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/payledger/payledger/providers/mercadopago"
)

// Sign reproduces the spec's MP-B vector.
func ExampleSign() {
	fmt.Println(mercadopago.Sign("your_secret_key_here", "999999999", "bb56a2f1-6aae-46ac-982e-9dcd3581d08e", "1704908010"))
	// Output: ts=1704908010,v1=c0412036a1c8b6a874049f5931f01bc6c12308647ba4d17136aacbd61207ea0f
}

func ExampleProvider_Verify() {
	p, err := mercadopago.New(mercadopago.Config{Secrets: []string{"mp_secret"}, MaxAge: time.Hour})
	if err != nil {
		panic(err)
	}
	query := url.Values{"data.id": {"999999999"}, "type": {"payment"}}
	body := []byte(`{"id":12345,"type":"payment","action":"payment.updated","date_created":"2026-03-01T10:00:00.000-03:00","data":{"id":"999999999"}}`)
	h := http.Header{}
	h.Set(mercadopago.RequestIDHeader, "req-1")
	h.Set(mercadopago.Header, mercadopago.Sign("mp_secret", "999999999", "req-1", "1772370000000")) // milliseconds
	signedAt := time.UnixMilli(1772370000000)

	fmt.Println(p.Verify(context.Background(), h, query, body, signedAt.Add(time.Minute)))
	fmt.Println(p.Verify(context.Background(), h, query, body, signedAt.Add(2*time.Hour)))
	n, err := p.Parse(context.Background(), h, query, body)
	fmt.Println(n.Events[0].EventType(), n.Events[0].EventMeta().ProviderPaymentID, err)
	// Output:
	// <nil>
	// mercadopago: verify: x-signature ts=1772370000000 is older than the 1h0m0s maximum age: signature too old
	// payment.notified.v1 999999999 <nil>
}
