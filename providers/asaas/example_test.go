package asaas_test

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/asaas"
)

func ExampleProvider_Parse() {
	p, err := asaas.New(asaas.Config{Tokens: []string{"tok_new", "tok_old"}, AllowedIPs: asaas.DefaultAllowedIPs()})
	if err != nil {
		panic(err)
	}
	body := []byte(`{"id":"evt_05b708f961d739ea7eba7e4db318f621&368604920","event":"PAYMENT_RECEIVED",` +
		`"dateCreated":"2024-06-12 16:45:03","payment":{"object":"payment","id":"pay_080225913252",` +
		`"value":100.00,"netValue":94.51,"billingType":"PIX","status":"RECEIVED"}}`)
	h := http.Header{}
	h.Set(asaas.Header, "tok_old")

	fmt.Println(p.AllowSource(netip.MustParseAddr("52.67.12.206")), p.AllowSource(netip.MustParseAddr("203.0.113.7")))
	fmt.Println(p.Verify(context.Background(), h, nil, body, time.Now()))
	n, err := p.Parse(context.Background(), h, nil, body)
	if err != nil {
		panic(err)
	}
	obs := n.Events[0].(*domain.PaymentStatusObserved)
	fmt.Println(obs.ProviderPaymentID, obs.Status, obs.ProviderStatusDetail, obs.Amount, obs.Currency, obs.OccurredAt)
	// Output:
	// true false
	// <nil>
	// pay_080225913252 confirmed received 10000 BRL 2024-06-12 19:45:03 +0000 UTC
}
