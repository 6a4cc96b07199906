package catalog

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// Separator joins a server id and a tool name in an exposed tool name.
const Separator = core.NameSeparator

const maxExposedName = 64

// ExposedName returns the name agents see for tool on server: server__tool.
// It must match ^[a-zA-Z0-9_-]{1,64}$, be stable across restarts and never
// give two tools the same name, so: a name that needs no change is used as
// it is; one with other characters has them replaced by '_' and gets a short
// hash of the original (so "a.b" and "a_b" stay apart); one too long is cut
// and gets the hash too.
func ExposedName(server, tool string) string {
	s, t := sanitize(server), sanitize(tool)
	full := s + Separator + t
	if s == server && t == tool && len(full) <= maxExposedName {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	if len(full) > maxExposedName-len(suffix) {
		full = full[:maxExposedName-len(suffix)]
	}
	return full + suffix
}

func sanitize(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "_"
	}
	return b.String()
}
