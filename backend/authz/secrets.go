package authz

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
)

// Secret prefixes make a leaked secret easy to recognise (and to find with
// secret scanners), and tell IdentifyToken which kind it was given.
const (
	// TokenPrefix starts an agent token, presented as
	// "Authorization: Bearer <token>". It is the prefix the single agent
	// token of earlier versions had, so that token keeps its meaning.
	TokenPrefix = "alk_"
	// SessionPrefix starts a session token returned by authenticate.
	SessionPrefix = "als_"
	// PasskeyPrefix starts an agent's passkey, the secret authenticate takes.
	PasskeyPrefix = "alp_"
)

// secretBytes is the randomness of every secret: 256 bits, far above the
// 128 the spec asks for, so an unsalted fast hash is enough at rest.
const secretBytes = 32

// newSecret returns prefix followed by 256 random bits, base64url.
func newSecret(prefix string) (string, error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make secret: %w", err)
	}
	return prefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// HashSecret returns the SHA-256 of a token, session token or passkey: all
// Airlock keeps of it.
func HashSecret(s string) [32]byte { return sha256.Sum256([]byte(s)) }

// SecretMatches reports whether presented hashes to hash, comparing in
// constant time so timing reveals nothing about a near guess.
func SecretMatches(hash [32]byte, presented string) bool {
	return hashMatches(hash, HashSecret(presented))
}

// hashMatches compares two hashes in constant time: for a secret whose
// hash is already at hand (hashed once per request, to look it up).
func hashMatches(hash, got [32]byte) bool {
	return subtle.ConstantTimeCompare(hash[:], got[:]) == 1
}

// wellFormed reports whether s is prefix plus exactly 256 bits of base64url:
// anything else is refused before it reaches a lookup.
func wellFormed(s, prefix string) bool {
	raw, ok := strings.CutPrefix(s, prefix)
	if !ok || len(raw) != base64.RawURLEncoding.EncodedLen(secretBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	return err == nil && len(b) == secretBytes
}

// newID returns prefix followed by 64 random bits in hex: unique names for
// rows, not secrets.
func newID(prefix string) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on supported platforms; an id must
		// never be predictable-and-colliding, so stop rather than go on.
		panic(fmt.Sprintf("authz: read random bytes: %v", err))
	}
	return prefix + hex.EncodeToString(b)
}

// displayPrefix is how a token is shown in lists: its kind and first
// characters, never enough to use it.
func displayPrefix(tok string) string {
	if len(tok) <= 10 {
		return tok
	}
	return tok[:10] + "…"
}
