package pagarme_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/payledger/payledger/providers/pagarme"
)

// The spec's self-computed legacy vector: the vector payload under the key
// sk_test_0000000000000000000000.
func ExampleSignHub() {
	body, err := os.ReadFile("testdata/vectors/pagarme_v5_payload.json")
	if err != nil {
		panic(err)
	}
	fmt.Println(pagarme.SignHub(body, "sk_test_0000000000000000000000"))
	// Output: sha1=9f7e12a429ccb430630b0f9610d12ac25399ebd2
}

func ExampleProvider_Parse() {
	p, err := pagarme.New(pagarme.Config{Secrets: []string{"sk_new", "sk_old"}})
	if err != nil {
		panic(err)
	}
	body := []byte(`{"id":"hook_1","type":"order.paid","created_at":"2026-01-15T12:00:00","data":{"id":"or_1","status":"paid",` +
		`"charges":[{"id":"ch_1","amount":6000,"paid_amount":6000,"status":"paid"},{"id":"ch_2","amount":4000,"paid_amount":4000,"status":"paid"}]}}`)
	h := http.Header{}
	h.Set(pagarme.HeaderHub, pagarme.SignHub(body, "sk_old"))

	fmt.Println(p.Verify(context.Background(), h, nil, body, time.Now()))
	n, err := p.Parse(context.Background(), h, nil, body)
	if err != nil {
		panic(err)
	}
	for _, ev := range n.Events {
		m := ev.EventMeta()
		fmt.Println(ev.EventType(), m.ProviderPaymentID, m.Key(), m.OccurredAt.Format(time.RFC3339))
	}
	// Output:
	// <nil>
	// payment.status_observed.v1 ch_1 hook_1:ch_1 2026-01-15T12:00:00Z
	// payment.status_observed.v1 ch_2 hook_1:ch_2 2026-01-15T12:00:00Z
}
