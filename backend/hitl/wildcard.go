package hitl

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// wildcard is a compiled tool pattern. Its meaning is exactly seed 002's:
// the pattern becomes the regular expression ^…$ with every "*" turned into
// ".*" and everything else literal, matched case-insensitively against the
// whole tool name. It is matched by hand, without regexp, because it is on
// the path of every tool call; the fuzz test FuzzWildcardMatchesSeedRegex
// checks the equivalence.
type wildcard struct {
	raw        string
	any        bool     // only stars: matches every name
	noStar     bool     // no star: whole-name comparison
	lead, tail bool     // the pattern starts / ends with a star
	segs       []string // the literal runs between stars, non-empty
	lower      []string // segs lower-cased, when the pattern is ASCII
	runes      [][]rune // segs as runes, for names that are not ASCII
	ascii      bool     // the pattern is ASCII
}

func compileWildcard(p string) *wildcard {
	w := &wildcard{raw: p, ascii: isASCII(p)}
	w.noStar = !strings.Contains(p, "*")
	w.lead = strings.HasPrefix(p, "*")
	w.tail = strings.HasSuffix(p, "*")
	for _, s := range strings.Split(p, "*") {
		if s != "" {
			w.segs = append(w.segs, s)
		}
	}
	w.any = len(w.segs) == 0 && !w.noStar
	for _, s := range w.segs {
		w.lower = append(w.lower, lowerASCII(s))
		w.runes = append(w.runes, []rune(s))
	}
	return w
}

// Match reports whether name matches the pattern.
func (w *wildcard) Match(name string) bool {
	if w.any {
		return true
	}
	if len(w.segs) == 0 { // the empty pattern matches only the empty name
		return name == ""
	}
	if w.ascii && isASCII(name) {
		return w.matchASCII(name)
	}
	return w.matchRunes([]rune(name))
}

func (w *wildcard) matchASCII(name string) bool {
	segs := w.lower
	if w.noStar {
		return len(name) == len(segs[0]) && hasPrefixFoldASCII(name, segs[0])
	}
	if !w.lead {
		if !hasPrefixFoldASCII(name, segs[0]) {
			return false
		}
		name = name[len(segs[0]):]
		segs = segs[1:]
	}
	if !w.tail {
		last := segs[len(segs)-1]
		if len(name) < len(last) || !hasPrefixFoldASCII(name[len(name)-len(last):], last) {
			return false
		}
		name = name[:len(name)-len(last)]
		segs = segs[:len(segs)-1]
	}
	for _, s := range segs {
		i := indexFoldASCII(name, s)
		if i < 0 {
			return false
		}
		name = name[i+len(s):]
	}
	return true
}

func (w *wildcard) matchRunes(name []rune) bool {
	segs := w.runes
	if w.noStar {
		return len(name) == len(segs[0]) && hasPrefixFoldRunes(name, segs[0])
	}
	if !w.lead {
		if !hasPrefixFoldRunes(name, segs[0]) {
			return false
		}
		name = name[len(segs[0]):]
		segs = segs[1:]
	}
	if !w.tail {
		last := segs[len(segs)-1]
		if len(name) < len(last) || !hasPrefixFoldRunes(name[len(name)-len(last):], last) {
			return false
		}
		name = name[:len(name)-len(last)]
		segs = segs[:len(segs)-1]
	}
	for _, s := range segs {
		i := indexFoldRunes(name, s)
		if i < 0 {
			return false
		}
		name = name[i+len(s):]
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func lowerASCII(s string) string {
	if !isASCII(s) {
		return s
	}
	return strings.ToLower(s)
}

func lowerByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFoldASCII reports whether s starts with the lower-case ASCII
// string lower, ignoring case.
func hasPrefixFoldASCII(s, lower string) bool {
	if len(s) < len(lower) {
		return false
	}
	for i := 0; i < len(lower); i++ {
		if lowerByte(s[i]) != lower[i] {
			return false
		}
	}
	return true
}

func indexFoldASCII(s, lower string) int {
	for i := 0; i+len(lower) <= len(s); i++ {
		if hasPrefixFoldASCII(s[i:], lower) {
			return i
		}
	}
	return -1
}

// equalFoldRune is the case-insensitive rune comparison regexp's (?i) uses:
// b is in a's simple case-folding orbit.
func equalFoldRune(a, b rune) bool {
	if a == b {
		return true
	}
	if a < utf8.RuneSelf && b < utf8.RuneSelf {
		return lowerByte(byte(a)) == lowerByte(byte(b))
	}
	for r := unicode.SimpleFold(a); r != a; r = unicode.SimpleFold(r) {
		if r == b {
			return true
		}
	}
	return false
}

func hasPrefixFoldRunes(s, p []rune) bool {
	if len(s) < len(p) {
		return false
	}
	for i := range p {
		if !equalFoldRune(p[i], s[i]) {
			return false
		}
	}
	return true
}

func indexFoldRunes(s, p []rune) int {
	for i := 0; i+len(p) <= len(s); i++ {
		if hasPrefixFoldRunes(s[i:], p) {
			return i
		}
	}
	return -1
}
