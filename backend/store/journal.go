package store

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/backend/core"
)

// appendRecord appends r to b as one line of JSON, as encoding/json would
// write it (the same keys, the same omitted empty fields), without
// reflection: every request is written to the journal twice, and with
// encoding/json the encoding cost as much as the write.
// TestAppendRecordMatchesEncodingJSON keeps it in step with
// core.AuditRecord.
func appendRecord(b []byte, r *core.AuditRecord) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, r.ID, 10)
	b = append(b, `,"time":"`...)
	b = r.Time.AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	b = appendField(b, "kind", r.Kind, false)
	b = appendField(b, "agent", r.Agent, false)
	b = appendField(b, "agentId", r.AgentID, true)
	b = appendField(b, "client", r.Client, true)
	b = appendField(b, "clientVersion", r.ClientVersion, true)
	b = appendField(b, "session", r.Session, false)
	b = appendField(b, "purpose", r.Purpose, true)
	b = appendField(b, "server", r.Server, false)
	b = appendField(b, "tool", r.Tool, false)
	b = appendField(b, "arguments", r.Arguments, false)
	b = appendField(b, "argsDigest", r.ArgsDigest, false)
	b = appendField(b, "decision", r.Decision, false)
	b = appendField(b, "reason", r.Reason, false)
	b = appendField(b, "ruleId", r.RuleID, true)
	if r.RuleSetVersion != 0 {
		b = append(b, `,"ruleSetVersion":`...)
		b = strconv.AppendInt(b, r.RuleSetVersion, 10)
	}
	b = appendField(b, "approver", r.Approver, true)
	if r.WaitMs != 0 {
		b = append(b, `,"waitMs":`...)
		b = strconv.AppendInt(b, r.WaitMs, 10)
	}
	b = appendField(b, "status", r.Status, false)
	b = appendField(b, "errorCode", r.ErrorCode, true)
	b = appendField(b, "error", r.Error, true)
	b = append(b, `,"latencyUs":`...)
	b = strconv.AppendInt(b, r.LatencyUs, 10)
	return append(b, '}', '\n')
}

// appendField appends `,"key":value`, or nothing for an empty value when
// omitEmpty is set.
func appendField(b []byte, key, value string, omitEmpty bool) []byte {
	if omitEmpty && value == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return appendString(b, value)
}

// jsonPlain marks the ASCII bytes encoding/json writes into a string as
// they are: one lookup per byte instead of six comparisons (the loop over
// each byte of every field was the largest part of encoding a record).
var jsonPlain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString appends s as a JSON string the way encoding/json does:
// invalid UTF-8 becomes U+FFFD, and <, >, &, U+2028 and U+2029 are escaped.
func appendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonPlain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
