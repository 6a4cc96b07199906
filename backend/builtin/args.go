package builtin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/backend/core"
)

// ReadArgs are file_read's arguments.
type ReadArgs struct {
	Path string `json:"path"`
}

// ReadResult is file_read's structured result. Content is the file's text,
// or its bytes in base64 for an allow-listed binary type.
type ReadResult struct {
	Content  string `json:"content"`
	MIMEType string `json:"mimeType,omitempty"`
	Encoding string `json:"encoding,omitempty"` // "utf-8" or "base64"
}

// WriteArgs are file_write's arguments.
type WriteArgs struct {
	Path      string `json:"path"`
	Content   string `json:"content"`
	Overwrite bool   `json:"overwrite"`
}

// WriteResult is file_write's structured result.
type WriteResult struct {
	Success bool `json:"success"`
}

// ExecArgs are shell_exec's arguments.
type ExecArgs struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Cwd     string   `json:"cwd"`
}

// ExecResult is shell_exec's structured result.
type ExecResult struct {
	Stdout   string `json:"stdout"`
	Stderr   string `json:"stderr"`
	ExitCode int    `json:"exitCode"`
	// TimedOut: Airlock killed the command at the timeout (ExitCode is
	// then TimeoutExitCode).
	TimedOut bool `json:"-"`
}

// argSpec is one argument a tool takes.
type argSpec struct {
	name     string
	kind     string // "a string", "a boolean", "an array of strings"
	required bool
	dst      any
}

// MaxArgsBytes bounds a call's arguments as JSON (file_write's content is
// capped separately by the settings).
const MaxArgsBytes = MaxFileCapBytes + 1<<20

// decodeArgs decodes a tool's arguments strictly: a JSON object with no
// unknown names, every required one present, each of its type. Errors name
// the argument and say what was expected.
func decodeArgs(tool string, raw json.RawMessage, specs ...argSpec) error {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.name
	}
	took := fmt.Sprintf("%s takes %s", tool, strings.Join(names, ", "))
	if len(raw) > MaxArgsBytes {
		return core.Errorf(core.ETooLarge, "the arguments are %d bytes; the limit is %d", len(raw), MaxArgsBytes)
	}
	if !utf8.Valid(raw) {
		return core.Errorf(EInvalidArguments, "the arguments are not valid UTF-8")
	}
	fields := map[string]json.RawMessage{}
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		if trimmed[0] != '{' {
			return (&core.Error{Code: EInvalidArguments, Message: "the arguments must be a JSON object"}).WithHint(took)
		}
		if err := json.Unmarshal(trimmed, &fields); err != nil {
			return (&core.Error{Code: EInvalidArguments, Message: "the arguments are not valid JSON: " + err.Error()}).WithHint(took)
		}
	}
	var unknown []string
	for k := range fields {
		if !slices.Contains(names, k) {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return (&core.Error{Code: EInvalidArguments, Message: fmt.Sprintf("unknown argument %q", unknown[0])}).WithHint(took)
	}
	for _, s := range specs {
		v, ok := fields[s.name]
		isNull := ok && bytes.Equal(bytes.TrimSpace(v), []byte("null"))
		switch {
		case (!ok || isNull) && s.required:
			return (&core.Error{Code: EInvalidArguments, Message: fmt.Sprintf("missing argument %q (%s)", s.name, s.kind)}).WithHint(took)
		case !ok || isNull:
			continue
		}
		if err := json.Unmarshal(v, s.dst); err != nil {
			return (&core.Error{Code: EInvalidArguments, Message: fmt.Sprintf("argument %q must be %s, got %s", s.name, s.kind, jsonKind(v))}).WithHint(took)
		}
	}
	return nil
}

// jsonKind names the JSON type of v for messages.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		var items []json.RawMessage
		if json.Unmarshal(v, &items) == nil {
			for _, it := range items {
				if k := jsonKind(it); k != "a string" {
					return "an array holding " + k
				}
			}
		}
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

func parseReadArgs(raw json.RawMessage) (ReadArgs, error) {
	var a ReadArgs
	err := decodeArgs(ToolFileRead, raw, argSpec{"path", "a string", true, &a.Path})
	return a, err
}

func parseWriteArgs(raw json.RawMessage) (WriteArgs, error) {
	var a WriteArgs
	err := decodeArgs(ToolFileWrite, raw,
		argSpec{"path", "a string", true, &a.Path},
		argSpec{"content", "a string", true, &a.Content},
		argSpec{"overwrite", "a boolean", false, &a.Overwrite})
	return a, err
}

func parseExecArgs(raw json.RawMessage) (ExecArgs, error) {
	var a ExecArgs
	err := decodeArgs(ToolShellExec, raw,
		argSpec{"command", "a string", true, &a.Command},
		argSpec{"args", "an array of strings", false, &a.Args},
		argSpec{"cwd", "a string", false, &a.Cwd})
	return a, err
}
