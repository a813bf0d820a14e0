package sign

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

	"github.com/payledger/payledger/cmd/paysim/internal/truth"
	"github.com/payledger/payledger/providers/mercadopago"
	"github.com/payledger/payledger/providers/pagarme"
	"github.com/payledger/payledger/providers/stripe"
)

// Secrets are what paysim signs webhooks with; the ledger must be
// configured with the same (paysim env).
type Secrets struct {
	Stripe      string // Stripe endpoint secret
	MercadoPago string // Mercado Pago webhook secret
	AsaasToken  string // asaas-access-token sent with webhooks
}

// Signer adds each provider's authentication to a delivery, per attempt, as
// the provider does: Stripe signs every attempt with the current time,
// Mercado Pago with a fresh ts and x-request-id, Asaas sends its static
// token, Pagar.me signs the body with RS256.
type Signer struct {
	creds Secrets
	key   *rsa.PrivateKey
	kid   string
	seq   atomic.Int64
	rs256 sync.Map // webhook event ID → signature header; RS256 of a body never changes
}

// New returns a signer; key is the Pagar.me RS256 key (nil: no Pagar.me
// webhooks will be signed).
func New(secrets Secrets, key *rsa.PrivateKey) *Signer {
	s := &Signer{creds: secrets, key: key}
	if key != nil {
		s.kid = keyID(&key.PublicKey)
	}
	return s
}

// KeyID is the kid of the Pagar.me key, under which the JWKS must serve it.
func (s *Signer) KeyID() string { return s.kid }

// keyID names a Pagar.me signing key by its modulus, so a new key (a new
// paysim process) is a new kid and the ledger refetches the JWKS instead of
// checking against a cached old key under the same name.
func keyID(key *rsa.PublicKey) string {
	sum := sha256.Sum256(key.N.Bytes())
	return "paysim-" + hex.EncodeToString(sum[:6])
}

// Headers returns the authentication headers of one attempt at w.
func (s *Signer) Headers(p *truth.Payment, w *truth.Webhook, now time.Time) (http.Header, error) {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	switch p.Provider {
	case truth.Stripe:
		h.Set("Stripe-Signature", stripe.Sign(w.Body, s.creds.Stripe, now))
		h.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	case truth.MercadoPago:
		reqID := fmt.Sprintf("paysim-%d-%d", now.UnixNano(), s.seq.Add(1))
		ts := strconv.FormatInt(now.UnixMilli(), 10)
		h.Set("x-signature", mercadopago.Sign(s.creds.MercadoPago, p.ID, reqID, ts))
		h.Set("x-request-id", reqID)
	case truth.Asaas:
		h.Set("asaas-access-token", s.creds.AsaasToken)
		h.Set("User-Agent", "Asaas_Hmlg/3.0")
	case truth.Pagarme:
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
func (s *Signer) pagarme(w *truth.Webhook) (string, error) {
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

// Presign computes the RS256 signature of every Pagar.me webhook in
// payments, on every core, before the run's clock starts. A provider signs
// on its own machines, and an RS256 signature (about a millisecond of CPU)
// is paysim's most expensive step: signed during the run, it would take
// the shared cores from the service being measured. The attempts then find
// the signatures in the cache, as they would have after the first attempt.
func (s *Signer) Presign(payments []*truth.Payment) error {
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, p := range payments {
		if p.Provider != truth.Pagarme {
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
