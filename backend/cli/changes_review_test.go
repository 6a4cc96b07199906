package cli

import (
	"strings"
	"testing"
)

// Review: characters that read as nothing (or as blank) on a terminal but
// reach the model are shown as escapes too: variation selectors carry
// hidden text a model decodes ("variation selector smuggling"), Hangul
// fillers and the Braille blank look like spaces, a line separator breaks
// or hides a line in some terminals, private-use and unassigned code
// points render as nothing in many fonts.
func TestPrintableShowsInvisibleCharacters(t *testing.T) {
	for _, r := range []rune{
		0xFE0F,   // VARIATION SELECTOR-16
		0xE0100,  // VARIATION SELECTOR-17 (smuggled byte 0x10)
		0xE01EF,  // VARIATION SELECTOR-256
		0x3164,   // HANGUL FILLER
		0x115F,   // HANGUL CHOSEONG FILLER
		0x2800,   // BRAILLE PATTERN BLANK
		0x2028,   // LINE SEPARATOR
		0x2029,   // PARAGRAPH SEPARATOR
		0xF8FF,   // private use
		0x10FFFD, // supplementary private use
		0x0378,   // unassigned
	} {
		s := "Reads things." + string(r) + "x"
		if got := printable(s); strings.ContainsRune(got, r) {
			t.Errorf("printable(%q) = %q: U+%04X left as it is", s, got, r)
		}
	}
}
