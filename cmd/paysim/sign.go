package main

import (
	"crypto/rsa"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/payledger/payledger/providers/mercadopago"
	"github.com/payledger/payledger/providers/pagarme"
	"github.com/payledger/payledger/providers/stripe"
)

// Credentials are the secrets paysim signs with and the ledger must be
// configured with (see Config.env).
type Credentials struct {
	StripeSecret      string
	MercadoPagoSecret string
	MercadoPagoToken  string // access token the fake API expects
	AsaasToken        string // asaas-access-token sent with webhooks
	AsaasAPIKey       string // access_token the fake API expects
	PagarmeAPIKey     string // HTTP Basic user the fake API expects
}

// signer adds each provider's authentication to a delivery, per attempt, as
// the provider does: Stripe signs every attempt with the current time,
// Mercado Pago with a fresh ts and x-request-id, Asaas sends its static
// token, Pagar.me signs the body with RS256.
type signer struct {
	creds Credentials
	key   *rsa.PrivateKey
	kid   string
	seq   atomic.Int64
	rs256 sync.Map // webhook event ID → signature header; RS256 of a body never changes
}

// keyID names a Pagar.me signing key by its modulus, so a new key (a new
// paysim process) is a new kid and the ledger refetches the JWKS instead of
// checking against a cached old key under the same name.
func keyID(key *rsa.PublicKey) string {
	sum := sha256.Sum256(key.N.Bytes())
	return "paysim-" + hex.EncodeToString(sum[:6])
}

// headers returns the authentication headers of one attempt at w.
func (s *signer) headers(p *Payment, w *Webhook, now time.Time) (http.Header, error) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	switch p.Provider {
	case stripeName:
		h.Set("Stripe-Signature", stripe.Sign(w.Body, s.creds.StripeSecret, now))
		h.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	case mercadoPagoName:
		reqID := fmt.Sprintf("paysim-%d-%d", now.UnixNano(), s.seq.Add(1))
		ts := strconv.FormatInt(now.UnixMilli(), 10)
		h.Set("x-signature", mercadopago.Sign(s.creds.MercadoPagoSecret, p.ID, reqID, ts))
		h.Set("x-request-id", reqID)
	case asaasName:
		h.Set("asaas-access-token", s.creds.AsaasToken)
		h.Set("User-Agent", "Asaas_Hmlg/3.0")
	case pagarmeName:
		sig, err := s.pagarme(w)
		if err != nil {
			return nil, err
		}
		h.Set("X-Webhook-Asymmetric-Signature", sig)
	default:
		return nil, fmt.Errorf("paysim: sign: unknown provider %q", p.Provider)
	}
	return h, nil
}

// pagarme returns the RS256 signature header of w, computed once.
func (s *signer) pagarme(w *Webhook) (string, error) {
	if v, ok := s.rs256.Load(w.EventID); ok {
		return v.(string), nil
	}
	sig, err := pagarme.SignRS256(w.Body, s.key, s.kid)
	if err != nil {
		return "", fmt.Errorf("paysim: sign %s: %w", w.EventID, err)
	}
	s.rs256.Store(w.EventID, sig)
	return sig, nil
}

// presign computes the RS256 signature of every Pagar.me webhook in
// payments, on every core, before the run's clock starts. A provider signs
// on its own machines, and an RS256 signature (about a millisecond of CPU)
// is paysim's most expensive step: signed during the run, it would take
// the shared cores from the service being measured. The attempts then find
// the signatures in the cache, as they would have after the first attempt.
func (s *signer) presign(payments []*Payment) error {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, p := range payments {
		if p.Provider != pagarmeName {
			continue
		}
		for i := range p.Steps {
			w := &p.Steps[i].Webhook
			g.Go(func() error {
				_, err := s.pagarme(w)
				return err
			})
		}
	}
	return g.Wait()
}
