package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
)

// The top-level keys that hold server entries. Claude Desktop, Cursor and
// Claude Code use mcpServers; VS Code uses servers.
const (
	keyMCPServers = "mcpServers"
	keyServers    = "servers"
)

// MaxTimeout is the longest start or call timeout a server may have, in
// seconds: a day. A larger number is more likely milliseconds, as some
// tools write their timeouts.
const MaxTimeout = 24 * 60 * 60

const timeoutWhat = "a whole number of seconds from 1 to 86400"

// isKnownField reports whether Airlock understands an entry field; every
// other field is kept in ServerConfig.Extra.
func isKnownField(name string) bool {
	switch name {
	case "command", "args", "env", "url", "type", "headers", "disabled", "noPrefix", "trustNewTools", "sandbox", "startTimeout", "callTimeout":
		return true
	}
	return false
}

// idPattern is what a server id may look like. It ends up in tool names
// (`id__tool`, at most 64 characters), hence the short limit and the
// restricted alphabet.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$`)

// Validate reports whether cfg is a server Airlock can run, as an EInvalid
// *core.Error naming the first problem.
func Validate(cfg core.ServerConfig) error {
	if !idPattern.MatchString(cfg.ID) {
		return core.Errorf(core.EInvalid, "server id %q is invalid", cfg.ID).
			WithHint("use 1-48 letters, digits, '.', '_' or '-', starting with a letter or digit")
	}
	if core.Reserved(cfg.ID) {
		return core.Errorf(core.EInvalid, "server id %q is Airlock's own (built-in servers: %s)", cfg.ID, strings.Join(core.ReservedServerIDs, ", ")).
			WithHint("choose another id")
	}
	if strings.Contains(cfg.ID, "__") {
		// Tools are exposed as server__tool; a "__" in the id would make
		// the split ambiguous.
		return core.Errorf(core.EInvalid, "server id %q contains \"__\", the namespace separator", cfg.ID)
	}
	hasCmd, hasURL := cfg.Command != "", cfg.URL != ""
	switch {
	case hasCmd && hasURL:
		return core.Errorf(core.EInvalid, "server %q has both a command and a url; give exactly one", cfg.ID)
	case !hasCmd && !hasURL:
		return core.Errorf(core.EInvalid, "server %q has neither a command nor a url; give exactly one", cfg.ID)
	}
	switch cfg.Type {
	case "", "stdio", "http", "sse", "streamable-http", "streamableHttp":
	default:
		return core.Errorf(core.EInvalid, "server %q has unknown type %q", cfg.ID, cfg.Type).
			WithHint("use stdio, http, sse or streamable-http")
	}
	if hasCmd && cfg.Type != "" && cfg.Type != "stdio" {
		return core.Errorf(core.EInvalid, "server %q has a command but type %q; a command needs type stdio", cfg.ID, cfg.Type)
	}
	if hasURL {
		if cfg.Type == "stdio" {
			return core.Errorf(core.EInvalid, "server %q has a url but type stdio", cfg.ID)
		}
		u, err := url.Parse(cfg.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return core.Errorf(core.EInvalid, "server %q has url %q; it must be an http:// or https:// URL", cfg.ID, cfg.URL)
		}
		if len(cfg.Args) > 0 || len(cfg.Env) > 0 {
			return core.Errorf(core.EInvalid, "server %q has a url and args/env; those only apply to a command", cfg.ID)
		}
	}
	if hasCmd && len(cfg.Headers) > 0 {
		return core.Errorf(core.EInvalid, "server %q has a command and headers; headers only apply to a url", cfg.ID)
	}
	if cfg.Sandbox && cfg.Command == "" {
		return core.Errorf(core.EInvalid, "server %q is a url with sandbox set; only a server Airlock starts (a command) runs in the sandbox", cfg.ID)
	}
	for _, t := range []struct {
		name  string
		value int
	}{{"startTimeout", cfg.StartTimeout}, {"callTimeout", cfg.CallTimeout}} {
		if t.value < 0 || t.value > MaxTimeout {
			return core.Errorf(core.EInvalid, "server %q has %s %d; it must be %s", cfg.ID, t.name, t.value, timeoutWhat).
				WithHint("leave it out for Airlock's default")
		}
	}
	for k := range cfg.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return core.Errorf(core.EInvalid, "server %q has invalid environment variable name %q", cfg.ID, k)
		}
	}
	for k := range cfg.Headers {
		if k == "" || strings.ContainsAny(k, " :\r\n\x00") {
			return core.Errorf(core.EInvalid, "server %q has invalid header name %q", cfg.ID, k)
		}
	}
	for k, v := range cfg.Extra {
		if isKnownField(k) {
			return core.Errorf(core.EInvalid, "server %q: extra field %q clashes with a known field", cfg.ID, k)
		}
		if !json.Valid(v) {
			return core.Errorf(core.EInvalid, "server %q: extra field %q is not valid JSON", cfg.ID, k)
		}
	}
	return nil
}

// document is a parsed servers file.
type document struct {
	servers []core.ServerConfig        // sorted by id
	other   map[string]json.RawMessage // unknown top-level keys, kept verbatim
}

// entryProblem is one server entry that cannot be used.
type entryProblem struct {
	id, reason string
}

// parsed is the lenient reading of a config file: what Import needs.
type parsed struct {
	servers  []core.ServerConfig // valid entries, sorted by id
	problems []entryProblem      // invalid or duplicate entries, sorted by id
	other    map[string]json.RawMessage
	found    bool // whether any servers object was present
}

// parseStrict reads Airlock's own servers file: every problem is an error,
// since applying half a file would start a set of servers nobody wrote.
func parseStrict(data []byte) (document, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return document{}, core.Errorf(core.EInvalid, "the file is empty").
			WithHint(`write {"mcpServers": {}} to remove all servers`)
	}
	p, err := parse(data, []string{keyMCPServers}, true)
	if err != nil {
		return document{}, err
	}
	if len(p.problems) > 0 {
		pr := p.problems[0]
		return document{}, core.Errorf(core.EInvalid, "server %q: %s", pr.id, pr.reason)
	}
	return document{servers: p.servers, other: p.other}, nil
}

// parse reads a JSON config file. Entries are taken from the objects named by
// serverKeys; all other top-level keys are returned in other. Syntax errors
// and duplicate top-level keys are errors; a bad entry is a problem. Strict
// also makes a duplicate key anywhere else an error: an imported file (say
// ~/.claude.json) may hold anything outside its servers, Airlock's own may not.
func parse(data []byte, serverKeys []string, strict bool) (parsed, error) {
	if err := checkSyntax(data); err != nil {
		return parsed{}, err
	}
	dups, err := findDuplicateKeys(data)
	if err != nil {
		return parsed{}, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return parsed{}, core.Errorf(core.EInvalid, "the file must hold a JSON object")
	}
	isServerKey := map[string]bool{}
	for _, k := range serverKeys {
		isServerKey[k] = true
	}
	// Duplicates decide an entry's fate below; anywhere else they are errors.
	dupIDs := map[string]bool{}
	dupInEntry := map[string]string{}
	for _, d := range dups {
		switch {
		case len(d.path) == 1:
			return parsed{}, core.Errorf(core.EInvalid, "duplicate key %q at %s", d.path[0], d.pos)
		case isServerKey[d.path[0]] && len(d.path) == 2:
			dupIDs[d.path[1]] = true
		case isServerKey[d.path[0]]:
			if _, seen := dupInEntry[d.path[1]]; !seen {
				dupInEntry[d.path[1]] = fmt.Sprintf("duplicate key %q at %s", strings.Join(d.path[2:], "."), d.pos)
			}
		default:
			if strict {
				return parsed{}, core.Errorf(core.EInvalid, "duplicate key %q at %s", strings.Join(d.path, "."), d.pos)
			}
		}
	}

	var p parsed
	p.other = map[string]json.RawMessage{}
	seen := map[string]bool{}
	for k, v := range top {
		if !isServerKey[k] {
			p.other[k] = v
			continue
		}
		p.found = true
		var entries map[string]json.RawMessage
		if err := json.Unmarshal(v, &entries); err != nil || bytes.Equal(bytes.TrimSpace(v), []byte("null")) {
			return parsed{}, core.Errorf(core.EInvalid, "%q must be an object mapping server ids to entries", k)
		}
		for id, raw := range entries {
			switch {
			case dupIDs[id]:
				p.problems = append(p.problems, entryProblem{id, "the id appears more than once in the file"})
			case seen[id]:
				p.problems = append(p.problems, entryProblem{id, fmt.Sprintf("the id appears under both %q and %q", keyMCPServers, keyServers)})
			case dupInEntry[id] != "":
				p.problems = append(p.problems, entryProblem{id, dupInEntry[id]})
			default:
				cfg, err := decodeEntry(id, raw)
				if err == nil {
					err = Validate(cfg)
				}
				if err != nil {
					p.problems = append(p.problems, entryProblem{id, core.ErrorMessage(err)})
				} else {
					p.servers = append(p.servers, cfg)
				}
			}
			seen[id] = true
		}
	}
	sort.Slice(p.servers, func(i, j int) bool { return p.servers[i].ID < p.servers[j].ID })
	sort.Slice(p.problems, func(i, j int) bool { return p.problems[i].id < p.problems[j].id })
	return p, nil
}

// decodeEntry turns one mcpServers entry into a ServerConfig, moving every
// field Airlock does not know into Extra.
func decodeEntry(id string, raw json.RawMessage) (core.ServerConfig, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return core.ServerConfig{}, core.Errorf(core.EInvalid, "the entry must be an object")
	}
	cfg := core.ServerConfig{ID: id}
	for k, v := range fields {
		var target any
		var what string
		key := k
		if (k == "serverUrl" || k == "httpUrl") && fields["url"] == nil {
			// Windsurf's and Gemini CLI's name for the url; an entry with
			// a url of its own keeps it as another tool's field.
			key = "url"
		}
		switch key {
		case "command":
			target, what = &cfg.Command, "a string"
		case "args":
			target, what = &cfg.Args, "an array of strings"
		case "env":
			target, what = &cfg.Env, "an object of strings"
		case "url":
			target, what = &cfg.URL, "a string"
		case "type":
			target, what = &cfg.Type, "a string"
		case "headers":
			target, what = &cfg.Headers, "an object of strings"
		case "disabled":
			target, what = &cfg.Disabled, "true or false"
		case "noPrefix":
			target, what = &cfg.NoPrefix, "true or false"
		case "trustNewTools":
			target, what = &cfg.TrustNewTools, "true or false"
		case "sandbox":
			target, what = &cfg.Sandbox, "true or false"
		case "startTimeout", "callTimeout":
			// A whole number however it is written (120, 1.2e2, 120.0).
			var f float64
			if json.Unmarshal(v, &f) != nil || f != math.Trunc(f) || f < 1 || f > MaxTimeout {
				if f > MaxTimeout && f == math.Trunc(f) {
					return core.ServerConfig{}, core.Errorf(core.EInvalid, "server %q has %s %s; it must be %s", id, k, v, timeoutWhat).
						WithHint("leave it out for Airlock's default")
				}
				return core.ServerConfig{}, core.Errorf(core.EInvalid, "field %q must be %s; leave it out for Airlock's default", k, timeoutWhat)
			}
			if key == "startTimeout" {
				cfg.StartTimeout = int(f)
			} else {
				cfg.CallTimeout = int(f)
			}
			continue
		default:
			// Fields of other tools are kept (Extra); one that is a known
			// field misspelt would be dropped without a word, and the server
			// start without its arguments or environment.
			if near := nearField(k); near != "" && fields[near] == nil {
				return core.ServerConfig{}, core.Errorf(core.EInvalid, "unknown field %q: did you mean %q?", k, near)
			}
			if cfg.Extra == nil {
				cfg.Extra = map[string]json.RawMessage{}
			}
			// Compact, so that a value reads back the same from the
			// pretty-printed file; key order and number text are kept.
			var c bytes.Buffer
			if err := json.Compact(&c, v); err != nil {
				return core.ServerConfig{}, core.Errorf(core.EInvalid, "field %q is not valid JSON", k)
			}
			cfg.Extra[k] = c.Bytes()
			continue
		}
		if err := json.Unmarshal(v, target); err != nil {
			return core.ServerConfig{}, core.Errorf(core.EInvalid, "field %q must be %s", k, what)
		}
	}
	return cfg, nil
}

// entryFields are the fields of an entry Airlock reads (decodeEntry).
var entryFields = []string{"command", "args", "env", "url", "type", "headers", "disabled", "noPrefix", "trustNewTools", "sandbox", "startTimeout", "callTimeout"}

// nearField returns the entry field k is most likely a misspelling of: the
// same but for case, or one edit away. "" when k is not near any. (A field
// two edits away is as often another tool's own: "comment" beside
// "command", "prefix".) The caller ignores a suggestion the entry has
// already: "argv" beside "args" is not its misspelling.
func nearField(k string) string {
	lk := strings.ToLower(k)
	for _, f := range entryFields {
		lf := strings.ToLower(f)
		if lk == lf || editDistance(lk, lf) <= 1 {
			return f
		}
	}
	return ""
}

// editDistance is the Damerau–Levenshtein (optimal string alignment)
// distance of two short strings: insertions, deletions, substitutions and
// swaps of neighbours each count one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// encodeEntry writes one entry with a stable key order: the known fields in
// a readable order, then the extra fields sorted by name.
func encodeEntry(buf *bytes.Buffer, cfg core.ServerConfig) error {
	buf.WriteByte('{')
	n := 0
	field := func(name string, v any) error {
		b, err := marshal(v)
		if err != nil {
			return fmt.Errorf("encode %s of server %s: %w", name, cfg.ID, err)
		}
		if n > 0 {
			buf.WriteByte(',')
		}
		n++
		k, _ := marshal(name)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(b)
		return nil
	}
	type kv struct {
		name string
		v    any
		set  bool
	}
	for _, f := range []kv{
		{"type", cfg.Type, cfg.Type != ""},
		{"command", cfg.Command, cfg.Command != ""},
		{"args", cfg.Args, cfg.Args != nil},
		{"env", cfg.Env, cfg.Env != nil},
		{"url", cfg.URL, cfg.URL != ""},
		{"headers", cfg.Headers, cfg.Headers != nil},
		{"disabled", cfg.Disabled, cfg.Disabled},
		{"noPrefix", cfg.NoPrefix, cfg.NoPrefix},
		{"trustNewTools", cfg.TrustNewTools, cfg.TrustNewTools},
		{"sandbox", cfg.Sandbox, cfg.Sandbox},
		{"startTimeout", cfg.StartTimeout, cfg.StartTimeout != 0},
		{"callTimeout", cfg.CallTimeout, cfg.CallTimeout != 0},
	} {
		if f.set {
			if err := field(f.name, f.v); err != nil {
				return err
			}
		}
	}
	for _, k := range sortedKeys(cfg.Extra) {
		if isKnownField(k) {
			continue
		}
		if err := field(k, cfg.Extra[k]); err != nil {
			return err
		}
	}
	buf.WriteByte('}')
	return nil
}

// marshal is json.Marshal without the HTML escaping: the file is read by
// people, and "a && b" in an argument should not come back as
// "a \u0026\u0026 b" once Airlock rewrites it.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// encode writes a servers file: mcpServers first, then the other top-level
// keys sorted, pretty-printed with two spaces and a final newline.
func encode(servers []core.ServerConfig, other map[string]json.RawMessage) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"mcpServers":{`)
	sorted := append([]core.ServerConfig(nil), servers...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	for i, s := range sorted {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := marshal(s.ID)
		buf.Write(k)
		buf.WriteByte(':')
		if err := encodeEntry(&buf, s); err != nil {
			return nil, err
		}
	}
	buf.WriteByte('}')
	for _, k := range sortedKeys(other) {
		if k == keyMCPServers {
			continue
		}
		kb, _ := marshal(k)
		buf.WriteByte(',')
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(other[k])
	}
	buf.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("indent servers file: %w", err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// checkSyntax returns an EInvalid error with the line and column of the
// first JSON syntax error in data, or nil.
func checkSyntax(data []byte) error {
	var v any
	err := json.Unmarshal(data, &v)
	var se *json.SyntaxError
	switch {
	case err == nil:
		if _, ok := v.(map[string]any); !ok {
			return core.Errorf(core.EInvalid, "the file must hold a JSON object")
		}
		return nil
	case errors.As(err, &se):
		off := se.Offset
		if strings.HasPrefix(se.Error(), "unexpected end") {
			off = int64(len(data)) + 1 // point just past the end
		}
		return core.Errorf(core.EInvalid, "invalid JSON at %s: %s", position(data, off), se.Error())
	default:
		return core.Errorf(core.EInvalid, "invalid JSON: %v", err)
	}
}

// position renders a byte offset as "line L, column C" (fsutil.JSONPosition).
func position(data []byte, offset int64) string { return fsutil.JSONPosition(data, offset) }

// duplicate is an object key that occurs more than once in its object.
type duplicate struct {
	path []string // keys from the top down to the duplicate key
	pos  string   // line and column of the second occurrence
}

// findDuplicateKeys walks data token by token and reports every repeated
// key. encoding/json silently keeps the last one, which would hide a server
// a user wrote twice.
func findDuplicateKeys(data []byte) ([]duplicate, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var dups []duplicate
	var walk func(path []string) error
	walk = func(path []string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			keys := map[string]bool{}
			for dec.More() {
				off := dec.InputOffset()
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := kt.(string)
				sub := append(append([]string(nil), path...), key)
				if keys[key] {
					dups = append(dups, duplicate{path: sub, pos: position(data, keyOffset(data, off))})
				}
				keys[key] = true
				if err := walk(sub); err != nil {
					return err
				}
			}
			_, err = dec.Token() // '}'
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(path); err != nil {
					return err
				}
			}
			_, err = dec.Token() // ']'
			return err
		}
		return nil
	}
	if err := walk(nil); err != nil && err != io.EOF {
		return nil, core.Errorf(core.EInvalid, "invalid JSON: %v", err)
	}
	return dups, nil
}

// keyOffset returns the offset just past the opening quote of the key that
// starts at or after off (InputOffset points before the separating comma and
// whitespace), so that position() names the quote itself.
func keyOffset(data []byte, off int64) int64 {
	for i := off; i < int64(len(data)); i++ {
		if data[i] == '"' {
			return i + 1
		}
	}
	return off
}
