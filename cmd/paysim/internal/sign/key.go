package sign

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// LoadKey returns the Pagar.me RS256 key: read from path when it
// exists, else generated (and written to path when one is given, so that a
// long-running ledger keeps verifying across paysim runs).
func LoadKey(path string) (*rsa.PrivateKey, error) {
	if path != "" {
		raw, err := os.ReadFile(path)
		switch {
		case err == nil:
			block, _ := pem.Decode(raw)
			if block == nil {
				return nil, fmt.Errorf("paysim: key %s: no PEM block", path)
			}
			k, err := x509.ParsePKCS1PrivateKey(block.Bytes)
			if err != nil {
				return nil, fmt.Errorf("paysim: key %s: %w", path, err)
			}
			return k, nil
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("paysim: key: %w", err)
		}
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("paysim: generate key: %w", err)
	}
	if path != "" {
		pemBytes := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(k)})
		if err := os.WriteFile(path, pemBytes, 0o600); err != nil {
			return nil, fmt.Errorf("paysim: key: %w", err)
		}
	}
	return k, nil
}
