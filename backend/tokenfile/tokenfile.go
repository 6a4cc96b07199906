// Package tokenfile keeps the data directory's agent token file: the token
// of earlier versions (the agent "default"), printed by `airlock token` and
// used by `airlock bridge` when no token is given. Tokens are random and
// compared by their SHA-256 in constant time.
//
// It imports core and config only, so that small programs (the bridge) can
// use it.
package tokenfile

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
)

// TokenFile is the name of the agent token file in the data directory.
const TokenFile = "agent-token"

// TokenPrefix starts every agent token, so that a leaked one is easy to
// recognise (and to find with secret scanners).
const TokenPrefix = "alk_"

// AgentToken returns the token agents present to connect to Airlock, read
// from the file agent-token in dataDir. When there is none yet and create is
// true, a new one is made: 32 random bytes, base64url, prefixed "alk_".
// Without create, a missing token is an ENotFound error.
//
// The token is kept in plaintext on purpose: the user must be able to show it
// again (`airlock token`) and paste it into an agent's config, which a hash
// would not allow. The file is mode 0600, like the credential files of other
// CLIs (~/.netrc, gh's hosts.yml, ~/.docker/config.json), so only the user
// can read it; the server keeps and compares only its SHA-256 (see HashToken
// and TokenMatches), so no code path compares the secret itself.
func AgentToken(dataDir string, create bool) (string, error) {
	path := filepath.Join(dataDir, TokenFile)
	tok, err := readToken(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return tok, err
	}
	if !create {
		return "", core.Errorf(core.ENotFound, "no agent token in %s yet", dataDir).
			WithHint("run 'airlock token' to create one")
	}
	tok, err = newToken()
	if err != nil {
		return "", err
	}
	// Another process (the app and the CLI, started together) may create
	// the token at the same moment: the first link wins and both return it.
	if err := writeExclusive(path, tok); errors.Is(err, fs.ErrExist) {
		return readToken(path)
	} else if err != nil {
		return "", err
	}
	return tok, nil
}

// RotateToken replaces the agent token with a new one and returns it. Agents
// holding the old token must be given the new one; a running Airlock must
// reread it.
func RotateToken(dataDir string) (string, error) {
	tok, err := newToken()
	if err != nil {
		return "", err
	}
	if err := fsutil.WriteFileAtomic(filepath.Join(dataDir, TokenFile), []byte(tok+"\n")); err != nil {
		return "", core.DataDirError(dataDir, "write agent token", err)
	}
	return tok, nil
}

// HashToken returns the SHA-256 of a token: what the server keeps and
// compares. Tokens are 256 random bits, so an unsalted fast hash suffices.
func HashToken(tok string) [32]byte {
	return sha256.Sum256([]byte(tok))
}

// TokenMatches reports whether presented is the token whose hash is hash. It
// compares hashes in constant time, so that timing reveals nothing about
// how much of a guess was right.
func TokenMatches(hash [32]byte, presented string) bool {
	got := HashToken(presented)
	return subtle.ConstantTimeCompare(hash[:], got[:]) == 1
}

func newToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make agent token: %w", err)
	}
	return TokenPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// readToken reads and checks the token file. A token edited by hand into
// something that is not an Airlock token is refused rather than trusted.
func readToken(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		return "", fmt.Errorf("read agent token: %w", err)
	}
	tok := strings.TrimSpace(string(data))
	if !validToken(tok) {
		return "", core.Errorf(core.EInvalid, "%s does not hold an agent token", path).
			WithHint("run 'airlock token --rotate' to replace it")
	}
	return tok, nil
}

// Valid reports whether tok has the shape of an agent token.
func Valid(tok string) bool { return validToken(tok) }

func validToken(tok string) bool {
	raw, ok := strings.CutPrefix(tok, TokenPrefix)
	if !ok {
		return false
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	return err == nil && len(b) == 32
}

// writeTemp writes tok to a new 0600 file next to path and syncs it.
func writeTemp(path, tok string) (string, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", core.DataDirError(dir, "create data dir", err)
	}
	f, err := os.CreateTemp(dir, "."+TokenFile+".*.tmp") // CreateTemp makes it 0600
	if err != nil {
		return "", core.DataDirError(dir, "write agent token", err)
	}
	_, werr := f.WriteString(tok + "\n")
	if werr == nil {
		werr = f.Sync()
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		os.Remove(f.Name())
		return "", fmt.Errorf("write agent token: %w", werr)
	}
	return f.Name(), nil
}

// writeExclusive creates path holding tok, failing with fs.ErrExist if it
// exists. Linking a complete temp file means no reader sees a partial token.
func writeExclusive(path, tok string) error {
	tmp, err := writeTemp(path, tok)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return err
		}
		return fmt.Errorf("write agent token: %w", err)
	}
	return nil
}
