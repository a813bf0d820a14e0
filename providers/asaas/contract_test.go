package asaas

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
	"github.com/payledger/payledger/providers/providertest"
)

var (
	_ providertest.Provider      = (*Provider)(nil)
	_ providertest.Authenticator = (*Provider)(nil)
	_ providertest.SourceChecker = (*Provider)(nil)
	_ providertest.StatusFetcher = (*StatusClient)(nil)
	_ providertest.Lister        = (*StatusClient)(nil)
)

func TestContract(t *testing.T) {
	providertest.Run(t, newProvider(t, Config{Tokens: []string{testToken}}), contractVectors(t))
}

func contractVectors(t *testing.T) providertest.Vectors {
	now := time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC) // unused by Asaas: any clock
	d := func(name, token string, body []byte) providertest.Delivery {
		h := http.Header{}
		if token != "" {
			h.Set(Header, token)
		}
		return providertest.Delivery{Name: name, Header: h, Body: body, Now: now}
	}
	spec := payload(t, nil)
	reject := func(c providertest.Class, name, token string, cause error) providertest.Rejected {
		return providertest.Rejected{Delivery: d(name, token, spec), Class: c, Kind: domain.KindUnauthorized, Err: cause}
	}
	return providertest.Vectors{
		Accepted: []providertest.Accepted{
			{Delivery: d("spec vector", testToken, spec),
				Want: []domain.Event{withVectorFee(observed("PAYMENT_RECEIVED", "RECEIVED", "received", domain.StatusConfirmed, 10000, 10000, 0))}},
			{Delivery: d("informational event", testToken, event(t, "PAYMENT_UPDATED", "PENDING"))},
			{Delivery: d("without an event id", testToken, payload(t, edits{"id": remove{}}))},
		},
		Ignored: []providertest.Delivery{
			d("transfer", testToken, []byte(`{"id":"evt_9f&1","event":"TRANSFER_DONE","dateCreated":"2024-06-12 10:00:00","transfer":{"id":"tra_1","value":5}}`)),
		},
		Rejected: []providertest.Rejected{
			reject(providertest.Forged, "same length", strings.Repeat("A", len(testToken)), ErrWrongToken),
			reject(providertest.Forged, "last byte changed", testToken[:len(testToken)-1]+"5", ErrWrongToken),
			reject(providertest.Truncated, "prefix", testToken[:10], ErrWrongToken),
			reject(providertest.Recased, "upper-cased", strings.ToUpper(testToken), ErrWrongToken),
			reject(providertest.Unsigned, "no token", "", ErrNoToken),
		},
		Exempt: map[providertest.Class]string{
			providertest.Stale: "Asaas sends a static token that carries no time",
		},
		SignedHeaders: []string{Header},
		RejectKind:    domain.KindUnauthorized,
		Authenticity:  domain.AuthUnverifiable, // a static token signs nothing
		Secrets:       []string{testToken},
	}
}
