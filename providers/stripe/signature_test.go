package stripe

import (
	"bytes"
	"encoding/hex"
	"errors"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/payledger/payledger/domain"
)

// The spec's fixed vectors (specs/providers.md §1.2), computed by two
// independent implementations.
const (
	vectorSecret = "whsec_test_secret"
	vectorT      = 1700000000
	vectorS1     = "ded26034f81789e97800931addef7d13b628536312dc367fa61eac9fc9c24be6"
	vectorS3     = "316b9ab98c15bfa039d243f3196acee619cf29749a91a634e6a8154e2f7b6727"
)

func vectorBody(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/vectors/s1_payload.json")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSignVectors(t *testing.T) {
	tests := []struct {
		name string
		body []byte
		want string
	}{
		{name: "S1", body: vectorBody(t), want: "t=1700000000,v1=" + vectorS1},
		{name: "S3 empty body", body: nil, want: "t=1700000000,v1=" + vectorS3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sign(tt.body, vectorSecret, time.Unix(vectorT, 0)); got != tt.want {
				t.Errorf("Sign() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestParseSignatureHeader(t *testing.T) {
	ab := []byte{0xab}
	tests := []struct {
		name    string
		header  string
		wantTS  int64
		want    [][]byte
		wantErr error
	}{
		{name: "S1", header: "t=1700000000,v1=" + vectorS1, wantTS: vectorT, want: [][]byte{unhex(t, vectorS1)}},
		{name: "several v1 and a v0", header: "t=1495999758,v1=ab,v1=cd,v0=ef", wantTS: 1495999758, want: [][]byte{ab, {0xcd}}},
		{name: "v1 before t", header: "v1=ab,t=12", wantTS: 12, want: [][]byte{ab}},
		{name: "unknown keys ignored", header: "t=1,v2=cd,x=y,v1=ab", wantTS: 1, want: [][]byte{ab}},
		{name: "upper-case hex decodes", header: "t=1,v1=AB", wantTS: 1, want: [][]byte{ab}},
		{name: "undecodable v1 skipped", header: "t=1,v1=zz,v1=abc,v1=ab", wantTS: 1, want: [][]byte{ab}},
		{name: "empty v1 kept as the SDK does", header: "t=1,v1=", wantTS: 1, want: [][]byte{{}}},
		{name: "last t wins", header: "t=1,t=2,v1=ab", wantTS: 2, want: [][]byte{ab}},
		{name: "plus sign", header: "t=+1700000000,v1=ab", wantTS: vectorT, want: [][]byte{ab}},
		{name: "leading zeros", header: "t=01700000000,v1=ab", wantTS: vectorT, want: [][]byte{ab}},
		{name: "negative t parses", header: "t=-5,v1=ab", wantTS: -5, want: [][]byte{ab}},

		{name: "empty", header: "", wantErr: ErrNotSigned},
		{name: "missing t", header: "v1=ab", wantErr: ErrInvalidHeader},
		{name: "t=abc", header: "t=abc,v1=ab", wantErr: ErrInvalidHeader},
		{name: "empty t", header: "t=,v1=ab", wantErr: ErrInvalidHeader},
		{name: "t overflows int64", header: "t=9223372036854775808,v1=ab", wantErr: ErrInvalidHeader},
		{name: "space in t", header: "t= 1,v1=ab", wantErr: ErrInvalidHeader},
		{name: "item without =", header: "t=1,v1", wantErr: ErrInvalidHeader},
		{name: "a=b=c", header: "t=1,v1=ab=cd", wantErr: ErrInvalidHeader},
		{name: "empty item", header: "t=1,,v1=ab", wantErr: ErrInvalidHeader},
		{name: "trailing comma", header: "t=1,v1=ab,", wantErr: ErrInvalidHeader},
		{name: "semicolons", header: "t=1;v1=ab", wantErr: ErrInvalidHeader},
		{name: "upper-case T is another key", header: "T=1,v1=ab", wantErr: ErrInvalidHeader},
		{name: "v0 only", header: "t=1,v0=ab", wantErr: ErrNoValidSignature},
		{name: "upper-case V1 is another key", header: "t=1,V1=ab", wantErr: ErrNoValidSignature},
		{name: "space before v1 makes another key", header: "t=1, v1=ab", wantErr: ErrNoValidSignature},
		{name: "only undecodable v1", header: "t=1,v1=xyz", wantErr: ErrNoValidSignature},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseSignatureHeader(tt.header)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || domain.KindOf(err) != domain.KindInvalid {
					t.Fatalf("ParseSignatureHeader(%q) error = %v, want invalid %v", tt.header, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseSignatureHeader(%q): %v", tt.header, err)
			}
			if got.Timestamp != tt.wantTS || !reflect.DeepEqual(got.Signatures, tt.want) {
				t.Errorf("ParseSignatureHeader(%q) = %d %x, want %d %x", tt.header, got.Timestamp, got.Signatures, tt.wantTS, tt.want)
			}
			if !got.Time().Equal(time.Unix(tt.wantTS, 0)) {
				t.Errorf("Time() = %v", got.Time())
			}
		})
	}
}

// TestSignRoundTrip: what Sign produces parses back to the signed values.
func TestSignRoundTrip(t *testing.T) {
	at := time.Unix(vectorT, 999) // sub-second part is not signed
	h, err := ParseSignatureHeader(Sign([]byte("x"), "k", at))
	if err != nil {
		t.Fatal(err)
	}
	if h.Timestamp != vectorT || len(h.Signatures) != 1 || !bytes.Equal(h.Signatures[0], computeMAC([]byte("k"), vectorT, []byte("x"))) {
		t.Errorf("round trip = %+v", h)
	}
}
