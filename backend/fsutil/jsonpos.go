package fsutil

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// JSONPosition renders a byte offset in data as "line L, column C" (both
// from 1). The offsets encoding/json reports point just past the offending
// byte.
func JSONPosition(data []byte, offset int64) string {
	if offset > 0 {
		offset-- // point at the offending byte itself
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	before := data[:offset]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(offset) - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}

// JSONErrorAt says where in data a decoding error of it is, "line L,
// column C", for a syntax error or a value of the wrong type; "" for any
// other error.
func JSONErrorAt(data []byte, err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off := se.Offset
		if strings.HasPrefix(se.Error(), "unexpected end") {
			off = int64(len(data)) + 1 // just past the end
		}
		return JSONPosition(data, off)
	case errors.As(err, &te):
		return JSONPosition(data, te.Offset)
	}
	return ""
}
