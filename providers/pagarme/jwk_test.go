package pagarme

import (
	"crypto/rsa"
	"encoding/base64"
	"math/big"
	"slices"
	"strings"
	"testing"
)

func TestParseJWKS(t *testing.T) {
	pub := &testKeys()[0].PublicKey
	n := base64.RawURLEncoding.EncodeToString(pub.N.Bytes())
	small := base64.RawURLEncoding.EncodeToString(new(big.Int).Rsh(pub.N, 1100).Bytes()) // ~948 bits
	even := base64.RawURLEncoding.EncodeToString(new(big.Int).SetBit(pub.N, 0, 0).Bytes())
	key := func(fields string) string { return `{"kid":"k1","kty":"RSA",` + fields + `}` }
	tests := []struct {
		name     string
		jwks     string
		wantKids []string // nil: an error
		wantErr  string
	}{
		{name: "as Pagar.me publishes", jwks: `{"keys":[` + key(`"use":"sig","alg":"RS256","n":"`+n+`","e":"AQAB"`) + `]}`, wantKids: []string{"k1"}},
		{name: "use and alg absent", jwks: `{"keys":[` + key(`"n":"`+n+`","e":"AQAB"`) + `]}`, wantKids: []string{"k1"}},
		{name: "padded n", jwks: `{"keys":[` + key(`"n":"`+base64.URLEncoding.EncodeToString(pub.N.Bytes())+`","e":"AQAB"`) + `]}`, wantKids: []string{"k1"}},
		{name: "n with a leading zero byte", jwks: `{"keys":[` + key(`"n":"`+base64.RawURLEncoding.EncodeToString(append([]byte{0}, pub.N.Bytes()...))+`","e":"AQAB"`) + `]}`, wantKids: []string{"k1"}},
		{name: "extra members and an x5c chain ignored", jwks: `{"keys":[` + key(`"n":"`+n+`","e":"AQAB","x5c":["MIIB"],"key_ops":["verify"]`) + `],"other":1}`, wantKids: []string{"k1"}},
		{name: "unusable keys skipped, usable kept", wantKids: []string{"k1", "k3"}, jwks: `{"keys":[` +
			`{"kid":"enc","kty":"RSA","use":"enc","n":"` + n + `","e":"AQAB"},` +
			`{"kid":"ec","kty":"EC","crv":"P-256","x":"AA","y":"AA"},` +
			`{"kid":"ps","kty":"RSA","alg":"PS256","n":"` + n + `","e":"AQAB"},` +
			`{"kty":"RSA","n":"` + n + `","e":"AQAB"},` +
			`{"kid":"weak","kty":"RSA","n":"` + small + `","e":"AQAB"},` +
			`{"kid":"even","kty":"RSA","n":"` + even + `","e":"AQAB"},` +
			`{"kid":"e1","kty":"RSA","n":"` + n + `","e":"AQ"},` +
			`{"kid":"e-even","kty":"RSA","n":"` + n + `","e":"AQAA"},` +
			`{"kid":"e-huge","kty":"RSA","n":"` + n + `","e":"AQAAAAAB"},` +
			`{"kid":"bad-n","kty":"RSA","n":"***","e":"AQAB"},` +
			`{"kid":7,"kty":"RSA","n":"` + n + `","e":"AQAB"},` +
			key(`"n":"`+n+`","e":"AQAB"`) + `,` +
			`{"kid":"k3","kty":"RSA","n":"` + n + `","e":"Aw"}]}`},
		{name: "a repeated kid keeps both keys", jwks: `{"keys":[` + key(`"n":"`+n+`","e":"AQAB"`) + `,` + key(`"n":"`+n+`","e":"Aw"`) + `]}`, wantKids: []string{"k1"}},
		{name: "no usable key", jwks: `{"keys":[{"kid":"enc","kty":"RSA","use":"enc","n":"` + n + `","e":"AQAB"}]}`, wantErr: `use "enc" is not sig`},
		{name: "empty set", jwks: `{"keys":[]}`, wantErr: "no usable RS256 signing key among 0"},
		{name: "not JSON", jwks: `<html>`, wantErr: "decode"},
		{name: "keys not an array", jwks: `{"keys":{}}`, wantErr: "decode"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			keys, err := parseJWKS([]byte(tt.jwks))
			if tt.wantKids == nil {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseJWKS() = %v, %v; want an error saying %q", keys, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseJWKS() = %v", err)
			}
			var kids []string
			for kid := range keys {
				kids = append(kids, kid)
			}
			slices.Sort(kids)
			if !slices.Equal(kids, tt.wantKids) {
				t.Fatalf("kids = %v, want %v", kids, tt.wantKids)
			}
		})
	}
	keys, _ := parseJWKS([]byte(`{"keys":[` + key(`"n":"`+n+`","e":"AQAB"`) + `,` + key(`"n":"`+n+`","e":"Aw"`) + `]}`))
	if len(keys["k1"]) != 2 || keys["k1"][0].E != 65537 || keys["k1"][1].E != 3 || keys["k1"][0].N.Cmp(pub.N) != 0 {
		t.Fatalf("repeated kid: %+v", keys["k1"])
	}
}

// TestMarshalJWKSRoundTrip: what MarshalJWKS publishes, parseJWKS reads back.
func TestMarshalJWKSRoundTrip(t *testing.T) {
	k := testKeys()
	b, err := MarshalJWKS(map[string]*rsa.PublicKey{"b": &k[1].PublicKey, "a": &k[0].PublicKey})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), `{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"a",`) {
		t.Fatalf("MarshalJWKS = %s", b)
	}
	keys, err := parseJWKS(b)
	if err != nil {
		t.Fatal(err)
	}
	if !keys["a"][0].Equal(&k[0].PublicKey) || !keys["b"][0].Equal(&k[1].PublicKey) {
		t.Fatalf("round trip lost keys: %v", keys)
	}
}
