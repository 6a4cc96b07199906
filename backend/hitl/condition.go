package hitl

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// pathStep is one step of a JSON path: an object key or an array index.
type pathStep struct {
	key   string
	index int
	isIdx bool
}

// parseJSONPath parses "$.a.b[0]", "a.b[0]", `$["a.b"]` and "$" (the whole
// arguments value).
func parseJSONPath(p string) ([]pathStep, error) {
	s := strings.TrimSpace(p)
	if s == "" {
		return nil, core.Errorf(core.EInvalid, "empty JSON path: use e.g. $.path")
	}
	if strings.HasPrefix(s, "$") {
		s = s[1:]
		if strings.HasPrefix(s, ".") {
			s = s[1:]
			if s == "" {
				return nil, core.Errorf(core.EInvalid, "JSON path %q ends with '.'", p)
			}
		}
	}
	var steps []pathStep
	for s != "" {
		switch {
		case s[0] == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return nil, core.Errorf(core.EInvalid, "JSON path %q: missing ']'", p)
			}
			inner := strings.TrimSpace(s[1:end])
			if len(inner) >= 2 && (inner[0] == '"' || inner[0] == '\'') && inner[len(inner)-1] == inner[0] {
				// Quoted keys may hold ']' only when escaped; keep it simple and
				// re-scan for the closing quote followed by ']'.
				q := inner[0]
				close := strings.Index(s[2:], string(q)+"]")
				if close < 0 {
					return nil, core.Errorf(core.EInvalid, "JSON path %q: unterminated quoted key", p)
				}
				steps = append(steps, pathStep{key: s[2 : 2+close]})
				s = s[2+close+2:]
			} else {
				n, err := strconv.Atoi(inner)
				if err != nil || n < 0 {
					return nil, core.Errorf(core.EInvalid, "JSON path %q: [%s] is not an array index or a quoted key", p, inner)
				}
				steps = append(steps, pathStep{index: n, isIdx: true})
				s = s[end+1:]
			}
		case s[0] == '.':
			s = s[1:]
			if s == "" || s[0] == '.' || s[0] == '[' {
				return nil, core.Errorf(core.EInvalid, "JSON path %q: empty key", p)
			}
		default:
			end := strings.IndexAny(s, ".[")
			if end < 0 {
				end = len(s)
			}
			steps = append(steps, pathStep{key: s[:end]})
			s = s[end:]
		}
	}
	return steps, nil
}

// compiledCond is a condition ready to evaluate.
type compiledCond struct {
	c     Condition
	steps []pathStep
	glob  *regexp.Regexp // glob and regex
}

func compileCondition(c Condition) (compiledCond, error) {
	cc := compiledCond{c: c}
	steps, err := parseJSONPath(c.Path)
	if err != nil {
		return cc, err
	}
	cc.steps = steps
	switch c.Op {
	case OpEquals:
	case OpPrefix:
		if c.Value == "" {
			return cc, core.Errorf(core.EInvalid, "prefix condition on %s needs a value", c.Path)
		}
	case OpGlob:
		re, err := regexp.Compile(globToRegexp(c.Value))
		if err != nil {
			return cc, core.Errorf(core.EInvalid, "invalid glob %q: %v", c.Value, err)
		}
		cc.glob = re
	case OpRegex:
		re, err := regexp.Compile(c.Value)
		if err != nil {
			return cc, core.Errorf(core.EInvalid, "invalid regex %q: %v", c.Value, err)
		}
		cc.glob = re
	case OpInside:
		if !filepath.IsAbs(c.Value) {
			return cc, core.Errorf(core.EInvalid, "inside condition on %s needs an absolute directory, got %q", c.Path, c.Value)
		}
	default:
		return cc, core.Errorf(core.EInvalid, "unknown condition op %q (use one of %s)", c.Op, strings.Join(Ops, ", "))
	}
	return cc, nil
}

// globToRegexp translates a glob: "**" any run, "*" any run without "/",
// "?" one character other than "/", everything else literal.
func globToRegexp(g string) string {
	var b strings.Builder
	b.WriteString(`^`)
	for i := 0; i < len(g); {
		switch {
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(`.*`)
			i += 2
		case g[i] == '*':
			b.WriteString(`[^/]*`)
			i++
		case g[i] == '?':
			b.WriteString(`[^/]`)
			i++
		default:
			j := i + 1
			for j < len(g) && g[j] != '*' && g[j] != '?' {
				j++
			}
			b.WriteString(regexp.QuoteMeta(g[i:j]))
			i = j
		}
	}
	b.WriteString(`$`)
	return "(?s)" + b.String()
}

// args is a call's arguments, decoded at most once per decision and only
// when a rule with conditions is reached.
type args struct {
	raw    json.RawMessage
	done   bool
	value  any
	failed bool
}

func (a *args) get() (any, bool) {
	if !a.done {
		a.done = true
		raw := bytes.TrimSpace(a.raw)
		if len(raw) == 0 {
			a.value = map[string]any{}
		} else {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var v any // decoding into a.value would move every args to the heap
			if err := dec.Decode(&v); err != nil {
				a.failed = true
			}
			a.value = v
		}
	}
	return a.value, !a.failed
}

func lookup(v any, steps []pathStep) (any, bool) {
	for _, s := range steps {
		if s.isIdx {
			arr, ok := v.([]any)
			if !ok || s.index >= len(arr) {
				return nil, false
			}
			v = arr[s.index]
			continue
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = obj[s.key]; !ok {
			return nil, false
		}
	}
	return v, true
}

// ValueText renders an argument value the way conditions compare it:
// strings as they are, anything else as compact JSON (objects with sorted
// keys).
func ValueText(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case json.Number:
		return t.String()
	case bool:
		return strconv.FormatBool(t)
	case nil:
		return "null"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// eval tests the condition; why says what failed when it did. undecided
// reports a failure that says nothing about the call — arguments that are not
// JSON, a value that is not a string where a text test needs one, a path that
// is relative or cannot be resolved — as opposed to a value that was there
// and did not pass. Rules that ask treat an undecided condition as met: when
// in doubt, ask.
func (cc *compiledCond) eval(a *args, explain bool) (ok, undecided bool, why string) {
	root, valid := a.get()
	if !valid {
		return false, true, explainf(explain, "condition %s failed: the arguments are not valid JSON", cc.c)
	}
	v, found := lookup(root, cc.steps)
	if !found {
		return false, false, explainf(explain, "condition %s failed: the arguments have no %s", cc.c, cc.c.Path)
	}
	text := ValueText(v)
	if _, isStr := v.(string); !isStr && cc.c.Op != OpEquals {
		switch v.(type) {
		case map[string]any, []any:
			return false, true, explainf(explain, "condition %s failed: %s is not a single value", cc.c, cc.c.Path)
		}
	}
	switch cc.c.Op {
	case OpEquals:
		ok = text == cc.c.Value
	case OpPrefix, OpGlob:
		if cc.c.Op == OpPrefix {
			ok = strings.HasPrefix(text, cc.c.Value)
		} else {
			ok = cc.glob.MatchString(text)
		}
		// A path that climbs with ".." may match as text and point
		// elsewhere: /dir/../../etc/shadow has the prefix /dir/ (found by
		// a new-user test). It decides nothing: a rule that auto-approves
		// does not, a rule that asks does (when in doubt, ask).
		if ok && climbs(text) {
			return false, true, explainf(explain, "condition %s failed: %s has a \"..\" in it, which a text test cannot follow (for a folder use %s)", cc.c, quoteShort(text), OpInside)
		}
	case OpRegex:
		ok = cc.glob.MatchString(text)
	case OpInside:
		s, isStr := v.(string)
		if !isStr {
			return false, true, explainf(explain, "condition %s failed: %s is not a path string", cc.c, cc.c.Path)
		}
		var reason string
		var decided bool
		ok, decided, reason = pathInside(s, cc.c.Value)
		if !ok {
			return false, !decided, explainf(explain, "condition %s failed: %s", cc.c, reason)
		}
		return true, false, ""
	}
	if !ok {
		if !explain {
			return false, false, ""
		}
		return false, false, fmt.Sprintf("condition %s failed: %s is %s", cc.c, cc.c.Path, quoteShort(text))
	}
	return true, false, ""
}

// climbs reports whether a path-like text has a ".." element.
func climbs(s string) bool {
	if !strings.Contains(s, "..") {
		return false
	}
	for _, el := range strings.FieldsFunc(s, func(r rune) bool { return r == '/' || r == '\\' }) {
		if el == ".." {
			return true
		}
	}
	return false
}

// explainf formats only when explaining. Callers on the hot path guard the
// call themselves, because boxing the arguments already allocates.
func explainf(explain bool, format string, a ...any) string {
	if !explain {
		return ""
	}
	return fmt.Sprintf(format, a...)
}

func quoteShort(s string) string {
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return strconv.Quote(s)
}

// pathInside reports whether path p lies inside directory dir (or is dir).
// It must be inside read both ways a program may read it:
//   - as the operating system does: ".." applies to the real parent after
//     symlinks, symlinks are followed as far as the path exists, and the
//     part that does not exist yet is taken literally;
//   - cleaned as text first, as many servers do before they open it
//     (server-filesystem's path.resolve()): dir/link/../../x is beside
//     dir then, whatever the link points to (found by a red-team review:
//     with a link pointing deeper into dir, such a path was judged inside
//     and a write beside it auto-approved).
//
// decided is false when that cannot be known (p is relative or cannot be
// resolved).
func pathInside(p, dir string) (inside, decided bool, why string) {
	if !filepath.IsAbs(p) {
		return false, false, fmt.Sprintf("%s is not an absolute path", quoteShort(p))
	}
	rd, err := resolvePath(dir)
	if err != nil {
		return false, false, fmt.Sprintf("cannot resolve %s: %v", quoteShort(dir), err)
	}
	clean := filepath.Clean(p)
	ways := []string{p}
	if clean != p {
		ways = append(ways, clean)
	}
	for _, q := range ways {
		rp, err := resolvePath(q)
		if err != nil {
			return false, false, fmt.Sprintf("cannot resolve %s: %v", quoteShort(q), err)
		}
		rel, err := filepath.Rel(rd, rp)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
			switch {
			case q == clean && clean != p && rp == clean:
				return false, true, fmt.Sprintf("%s is %s as text, outside %s", quoteShort(p), clean, rd)
			case rp != clean:
				return false, true, fmt.Sprintf("%s resolves to %s, outside %s", quoteShort(p), rp, rd)
			}
			return false, true, fmt.Sprintf("%s is outside %s", quoteShort(p), rd)
		}
	}
	return true, true, ""
}

// resolvePath resolves an absolute path component by component.
func resolvePath(p string) (string, error) {
	vol := filepath.VolumeName(p)
	cur := vol + string(filepath.Separator)
	rest := p[len(vol):]
	exists := true
	for _, comp := range strings.Split(rest, string(filepath.Separator)) {
		switch comp {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, comp)
		if !exists {
			cur = next
			continue
		}
		fi, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			exists = false
			cur = next
		case err != nil:
			return "", err
		case fi.Mode()&fs.ModeSymlink != 0:
			real, err := filepath.EvalSymlinks(next)
			if errors.Is(err, fs.ErrNotExist) {
				// A dangling link: where it points does not exist yet, but a
				// write through it would land there.
				target, rerr := os.Readlink(next)
				if rerr != nil {
					return "", rerr
				}
				if !filepath.IsAbs(target) {
					target = filepath.Join(cur, target)
				}
				real, err = resolvePath(target)
				if err != nil {
					return "", err
				}
				exists = false
			} else if err != nil {
				return "", err
			}
			cur = real
		default:
			cur = next
		}
	}
	return cur, nil
}
