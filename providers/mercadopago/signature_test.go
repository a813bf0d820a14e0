package mercadopago

import (
	"encoding/hex"
	"errors"
	"testing"
	"time"
)

func TestParseSignatureHeader(t *testing.T) {
	v1, _ := hex.DecodeString(vectorV1)
	tests := []struct {
		name    string
		in      string
		wantTS  string
		wantN   int // number of v1 signatures
		wantErr error
	}{
		{name: "vector", in: vectorHeader, wantTS: vectorTS, wantN: 1},
		{name: "milliseconds", in: "ts=1742505638683,v1=" + vectorV1, wantTS: "1742505638683", wantN: 1},
		{name: "order does not matter", in: "v1=" + vectorV1 + ",ts=" + vectorTS, wantTS: vectorTS, wantN: 1},
		{name: "keys lower-cased, parts trimmed", in: "  Ts = 17 ,\tV1=" + vectorV1, wantTS: "17", wantN: 1},
		{name: "value split on the first =", in: "ts=1,v1=" + vectorV1 + ",x=a=b", wantTS: "1", wantN: 1},
		{name: "parts without = are skipped", in: "garbage,ts=1,,v1=" + vectorV1 + ",", wantTS: "1", wantN: 1},
		{name: "non-hex v1 skipped", in: "ts=1,v1=zz,v1=" + vectorV1, wantTS: "1", wantN: 1},
		{name: "several v1 kept", in: "ts=1,v1=00,v1=" + vectorV1, wantTS: "1", wantN: 2},
		{name: "leading zeros kept verbatim", in: "ts=0017,v1=00", wantTS: "0017", wantN: 1},
		{name: "empty", in: "", wantErr: ErrNotSigned},
		{name: "blank", in: " \t ", wantErr: ErrNotSigned},
		{name: "no ts", in: "v1=" + vectorV1, wantErr: ErrInvalidHeader},
		{name: "empty ts is absent", in: "ts=,v1=" + vectorV1, wantErr: ErrInvalidHeader},
		{name: "ts not a number", in: "ts=1.5,v1=" + vectorV1, wantErr: ErrInvalidHeader},
		{name: "negative ts", in: "ts=-1,v1=" + vectorV1, wantErr: ErrInvalidHeader},
		{name: "ts with inner space", in: "ts=17 04,v1=" + vectorV1, wantErr: ErrInvalidHeader},
		{name: "ts twice", in: "ts=1,ts=1,v1=" + vectorV1, wantErr: ErrInvalidHeader},
		{name: "no v1", in: "ts=1", wantErr: ErrNoValidSignature},
		{name: "only a v0", in: "ts=1,v0=" + vectorV1, wantErr: ErrNoValidSignature},
		{name: "only invalid hex", in: "ts=1,v1=xyz", wantErr: ErrNoValidSignature},
		{name: "empty v1", in: "ts=1,v1=", wantErr: ErrNoValidSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sh, err := ParseSignatureHeader(tt.in)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ParseSignatureHeader(%q) = %+v, %v; want %v", tt.in, sh, err, tt.wantErr)
				}
				return
			}
			if err != nil || sh.TS != tt.wantTS || len(sh.Signatures) != tt.wantN {
				t.Fatalf("ParseSignatureHeader(%q) = %+v, %v", tt.in, sh, err)
			}
			if tt.name == "vector" && string(sh.Signatures[0]) != string(v1) {
				t.Errorf("v1 = %x", sh.Signatures[0])
			}
		})
	}
}

func TestSignatureHeaderTime(t *testing.T) {
	tests := []struct {
		ts   int64
		want time.Time
	}{
		{ts: 1704908010, want: time.Unix(1704908010, 0)},
		{ts: 1742505638683, want: time.UnixMilli(1742505638683)},
		{ts: 999_999_999_999, want: time.Unix(999_999_999_999, 0)},       // the last value read as seconds
		{ts: 1_000_000_000_000, want: time.UnixMilli(1_000_000_000_000)}, // the first read as milliseconds
		{ts: 0, want: time.Unix(0, 0)},
	}
	for _, tt := range tests {
		if got := (SignatureHeader{Timestamp: tt.ts}).Time(); !got.Equal(tt.want) {
			t.Errorf("Time(%d) = %v, want %v", tt.ts, got, tt.want)
		}
	}
}

func TestManifest(t *testing.T) {
	tests := []struct{ id, req, ts, want string }{
		{vectorDataID, vectorRequestID, vectorTS, "id:999999999;request-id:bb56a2f1-6aae-46ac-982e-9dcd3581d08e;ts:1704908010;"},
		{vectorDataID, "", vectorTS, "id:999999999;ts:1704908010;"}, // the docs' example shape
		{"", vectorRequestID, vectorTS, "request-id:bb56a2f1-6aae-46ac-982e-9dcd3581d08e;ts:1704908010;"},
		{"", "", "1", "ts:1;"},
	}
	for _, tt := range tests {
		if got := manifest(tt.id, tt.req, tt.ts); got != tt.want {
			t.Errorf("manifest(%q, %q, %q) = %q, want %q", tt.id, tt.req, tt.ts, got, tt.want)
		}
	}
}
