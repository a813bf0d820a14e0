package stripe_test

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/payledger/payledger/providers/stripe"
)

// A delivery signed with Sign verifies and parses; the spec's vector S3
// (empty body) gives this header.
func ExampleSign() {
	fmt.Println(stripe.Sign(nil, "whsec_test_secret", time.Unix(1700000000, 0)))
	// Output: t=1700000000,v1=316b9ab98c15bfa039d243f3196acee619cf29749a91a634e6a8154e2f7b6727
}

func ExampleProvider_Verify() {
	p, err := stripe.New(stripe.Config{Secrets: []string{"whsec_new", "whsec_old"}})
	if err != nil {
		panic(err)
	}
	body := []byte(`{"id":"evt_1","object":"event","created":1700000000,"type":"payment_intent.succeeded",` +
		`"data":{"object":{"id":"pi_1","amount":2000,"amount_received":2000,"currency":"usd"}}}`)
	signedAt := time.Unix(1700000000, 0)
	h := http.Header{}
	h.Set(stripe.Header, stripe.Sign(body, "whsec_old", signedAt))

	fmt.Println(p.Verify(context.Background(), h, nil, body, signedAt.Add(time.Minute)))
	fmt.Println(p.Verify(context.Background(), h, nil, body, signedAt.Add(time.Hour)))
	n, err := p.Parse(context.Background(), h, nil, body)
	fmt.Println(n.Events[0].EventType(), n.Events[0].EventMeta().ProviderPaymentID, err)
	// Output:
	// <nil>
	// stripe: verify: Stripe-Signature timestamp t=1700000000 is older than the 5m0s tolerance: signature too old
	// payment.succeeded.v1 pi_1 <nil>
}
