package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Separator joins a server id and a tool name in an exposed tool name.
const Separator = "__"

const maxExposedName = 64

// ExposedName returns the name agents see for tool on server: server__tool,
// with every character outside [A-Za-z0-9_-] replaced by '_' and, when longer
// than 64 characters, cut and suffixed with a short hash of the full name so
// that it stays unique and stable across restarts.
func ExposedName(server, tool string) string {
	full := sanitize(server) + Separator + sanitize(tool)
	if len(full) <= maxExposedName {
		return full
	}
	sum := sha256.Sum256([]byte(server + "\x00" + tool))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return full[:maxExposedName-len(suffix)] + suffix
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
