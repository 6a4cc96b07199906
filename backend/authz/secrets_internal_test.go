package authz

import (
	"encoding/base64"
	"math/bits"
	"strings"
	"testing"
)

// TestSecretsAreRandom: every kind of secret is its prefix plus 256 random
// bits; a thousand of them are all different and their bits balanced.
func TestSecretsAreRandom(t *testing.T) {
	for _, prefix := range []string{TokenPrefix, SessionPrefix, PasskeyPrefix} {
		seen := map[string]bool{}
		ones, total := 0, 0
		for i := 0; i < 1000; i++ {
			s, err := newSecret(prefix)
			if err != nil {
				t.Fatal(err)
			}
			if !wellFormed(s, prefix) || seen[s] {
				t.Fatalf("secret %q: well formed %v, repeated %v", s, wellFormed(s, prefix), seen[s])
			}
			seen[s] = true
			b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(s, prefix))
			if err != nil || len(b)*8 < 128 {
				t.Fatalf("secret %q carries %d bits: %v", s, len(b)*8, err)
			}
			for _, c := range b {
				ones += bits.OnesCount8(c)
			}
			total += len(b) * 8
		}
		// 256,000 fair bits: one percent off is ten standard deviations.
		if frac := float64(ones) / float64(total); frac < 0.49 || frac > 0.51 {
			t.Errorf("%s secrets: %.4f of bits set", prefix, frac)
		}
	}
}

func TestWellFormed(t *testing.T) {
	good, _ := newSecret(TokenPrefix)
	for s, want := range map[string]bool{
		good:                                     true,
		strings.Replace(good, "alk_", "als_", 1): false,
		good[:len(good)-1]:                       false,
		good + "A":                               false,
		TokenPrefix + strings.Repeat("*", 43):    false,
	} {
		if got := wellFormed(s, TokenPrefix); got != want {
			t.Errorf("wellFormed(%q) = %v; want %v", s, got, want)
		}
	}
}
