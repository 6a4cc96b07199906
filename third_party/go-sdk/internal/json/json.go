// Copyright 2025 The Go MCP SDK Authors. All rights reserved.
// Use of this source code is governed by the license
// that can be found in the LICENSE file.

// Package json provides internal JSON utilities.

package json

import (
	"bytes"
	"fmt"
	"io"

	"github.com/segmentio/encoding/json"
)

// defaultMaxDepth is the maximum JSON nesting depth accepted by [Unmarshal].
// Realistic MCP payloads nest only a handful of levels, so 1000 is far more
// than any legitimate message requires while keeping worst-case parse cost
// bounded.
const defaultMaxDepth = 1000

// errMaxDepthExceeded is returned by [Unmarshal] when the input nests deeper than [defaultMaxDepth].
var errMaxDepthExceeded = fmt.Errorf("json: exceeded maximum nesting depth of %d", defaultMaxDepth)

type Decoder struct {
	dec *json.Decoder
}

func NewDecoder(r io.Reader) *Decoder {
	dec := json.NewDecoder(r)
	dec.DontMatchCaseInsensitiveStructFields()
	return &Decoder{dec: dec}
}

func (d *Decoder) Decode(v any) error {
	return d.dec.Decode(v)
}

func Unmarshal(data []byte, v any) error {
	if err := checkMaxDepth(data, defaultMaxDepth); err != nil {
		return err
	}
	// Airlock patch (see PATCHES.md): parse the bytes in place. Decoding
	// through a Decoder over a bytes.Reader gave every call a fresh 32 KiB
	// read buffer; that was 94% of what a proxied call allocated.
	rest, err := json.Parse(data, v, json.DontMatchCaseInsensitiveStructFields)
	if err != nil {
		return err
	}
	if rest = bytes.TrimLeft(rest, " \t\r\n"); len(rest) != 0 {
		return fmt.Errorf("json: invalid character %q after top-level value", rest[0])
	}
	return nil
}

// checkMaxDepth scans data once and reports [errMaxDepthExceeded] if the
// nesting of JSON objects and arrays exceeds maxDepth. It is a lightweight pass which
// tracks '{' and '[' against '}' and ']' while skipping over the contents of strings.
//
// Airlock patch (see PATCHES.md): a string is skipped by searching for its
// closing quote with bytes.IndexByte instead of looking at each of its bytes
// in turn. A quote ends the string when an even number of backslashes
// precedes it (each backslash escapes the byte after it), which is what the
// byte-by-byte scan decided too. Strings are most of the bytes of a large
// result (a file's text), and the SDK runs this check on every Unmarshal of
// it: 20 % of Airlock's CPU for a 1 MiB file_read before.
func checkMaxDepth(data []byte, maxDepth int) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			end := stringEnd(data, i)
			if end < 0 {
				return nil // unterminated: the parser reports it
			}
			i = end
		case '{', '[':
			depth++
			if depth > maxDepth {
				return errMaxDepthExceeded
			}
		case '}', ']':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}

// stringEnd returns the index of the quote that closes the string opened
// by the quote at data[open], or -1 if there is none.
func stringEnd(data []byte, open int) int {
	for from := open + 1; ; {
		k := bytes.IndexByte(data[from:], '"')
		if k < 0 {
			return -1
		}
		q := from + k
		n := 0
		for p := q - 1; p > open && data[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			return q
		}
		from = q + 1
	}
}
