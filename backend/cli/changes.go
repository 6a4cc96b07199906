package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/airlock-dev/airlock/backend/config"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/instance"
	"github.com/airlock-dev/airlock/backend/pins"
	"mvdan.cc/sh/v3/syntax"
)

var changesCmd = command{name: "servers changes", usage: `servers changes [--json] [ID]

List what waits for you to accept, server by server: tools whose definition
changed since you accepted it, tools a server added after its first listing,
and instructions a server changed. Until you accept, agents keep the
accepted definition and instructions, and calls to a changed or new tool
ask you. Each entry ends with the command that accepts it. Asks the
Airlock running on the data directory.`}

var acceptCmd = command{name: "servers accept", usage: `servers accept ID TOOL|--instructions [--shown DIGEST | --yes]

Accept a changed or new tool's definition, or a server's changed
instructions: agents get them from now on. Without --shown or --yes it
prints the change and accepts nothing. --shown takes the digest that
'servers changes' printed: when the server lists something else since,
nothing is accepted. --yes accepts what this command prints. Asks the
Airlock running on the data directory.`}

// change is one thing that waits for the user's accept: a tool's changed
// definition, a new tool, or a server's changed instructions.
type change struct {
	Server string `json:"server"`
	Tool   string `json:"tool,omitempty"` // "" for instructions
	// Kind is "changed" or "new" (a tool), or "instructions".
	Kind   string   `json:"kind"`
	Fields []string `json:"fields,omitempty"` // what changed in a tool's definition
	// Accepted is what agents get meanwhile: the accepted definition (JSON;
	// "" for a new tool) or instructions ("" for none).
	Accepted string `json:"accepted"`
	// Now is what the server gives now, what accepting takes.
	Now string `json:"now"`
	// Shown is the digest of Now: --shown takes it.
	Shown  string    `json:"shown"`
	Since  time.Time `json:"since"`
	Accept string    `json:"accept"` // the command that accepts it
}

// Change kinds.
const (
	kindChanged      = "changed"
	kindNew          = "new"
	kindInstructions = "instructions"
)

// pendingChanges asks the running Airlock what waits for an accept, on
// server id only unless id is "".
func pendingChanges(ctx context.Context, dataDir, id string) ([]change, error) {
	var views []struct {
		Config core.ServerConfig `json:"config"`
		Status core.ServerStatus `json:"status"`
	}
	if err := instance.Call(ctx, dataDir, "Servers.List", nil, &views); err != nil {
		return nil, needsRunning(err, "accepted definitions")
	}
	flag := dataDirFlag(dataDir)
	var out []change
	found := id == ""
	for _, v := range views {
		st := v.Status
		if id != "" && st.ID != id {
			continue
		}
		found = true
		for _, t := range st.Tools {
			c := t.Changed
			if c == nil {
				continue
			}
			now := pins.Definition(t)
			ch := change{Server: st.ID, Tool: t.Name, Kind: kindChanged, Fields: c.Fields, Accepted: c.Accepted, Now: now, Shown: c.Shown, Since: c.Since}
			if c.New {
				ch.Kind, ch.Fields = kindNew, nil
			}
			if pins.Digest(now) != c.Shown {
				// What this command would print is not what accepting takes.
				return nil, core.Errorf(core.EConflict, "the definition of %s on %s changed while it was read", printable(t.Name), st.ID).
					WithHint("run the command again")
			}
			ch.Accept = "airlock servers accept" + flag + " " + quoteArg(st.ID) + " " + quoteArg(t.Name) + " --shown " + c.Shown
			out = append(out, ch)
		}
		if c := st.InstructionsChanged; c != nil {
			shown := pins.Digest(st.Instructions)
			out = append(out, change{Server: st.ID, Kind: kindInstructions, Accepted: c.Accepted, Now: st.Instructions, Shown: shown, Since: c.Since,
				Accept: "airlock servers accept" + flag + " " + quoteArg(st.ID) + " --instructions --shown " + shown})
		}
	}
	if !found {
		return nil, core.Errorf(core.ENotFound, "no server %q", id).WithHint("'airlock servers list' lists them")
	}
	return out, nil
}

// needsRunning explains an unavailable running Airlock for what (which
// lives in its process).
func needsRunning(err error, what string) error {
	if core.ErrorCode(err) == core.EUnavailable {
		return core.Errorf(core.EUnavailable, "%s", core.ErrorMessage(err)).
			WithHint(what + " live in the running Airlock: start it with 'airlock serve' (or the desktop app) on this data directory")
	}
	return err
}

// dataDirFlag is " --data-dir DIR" when dataDir is not the one a command
// finds by itself, so that a printed command acts on the same Airlock.
func dataDirFlag(dataDir string) string {
	if def, err := config.DefaultDataDir(os.Getenv); err == nil && filepath.Clean(def) == filepath.Clean(dataDir) {
		return ""
	}
	return " --data-dir " + quoteArg(dataDir)
}

func serversChanges(ctx context.Context, dataDir string, args []string, stdout io.Writer) error {
	fs := changesCmd.newFlags(&dataDir)
	asJSON := fs.Bool("json", false, "print JSON: an array of changes")
	pos, _, err := changesCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 1 {
		return changesCmd.usageError("give at most one server id")
	}
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	}
	list, err := pendingChanges(ctx, dataDir, id)
	if err != nil {
		return err
	}
	if *asJSON {
		if list == nil {
			list = []change{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(stdout, "nothing waits for you: every tool and every server's instructions are as you accepted them")
		return nil
	}
	for i, c := range list {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		printChange(stdout, c)
		fmt.Fprintf(stdout, "  accept with: %s\n", c.Accept)
	}
	return nil
}

func serversAccept(ctx context.Context, dataDir string, args []string, stdout io.Writer) error {
	fs := acceptCmd.newFlags(&dataDir)
	instructions := fs.Bool("instructions", false, "accept the server's changed instructions")
	shown := fs.String("shown", "", "accept only the definition or instructions with this digest (from 'servers changes')")
	yes := fs.Bool("yes", false, "accept what this command prints")
	pos, _, err := acceptCmd.parse(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case *instructions && len(pos) != 1:
		return acceptCmd.usageError("give the server id, and no tool, with --instructions")
	case !*instructions && len(pos) != 2:
		return acceptCmd.usageError("give the server id and the tool (or --instructions)")
	case *yes && *shown != "":
		return acceptCmd.usageError("give --shown or --yes, not both")
	}
	list, err := pendingChanges(ctx, dataDir, pos[0])
	if err != nil {
		return err
	}
	i := slices.IndexFunc(list, func(c change) bool {
		if *instructions {
			return c.Kind == kindInstructions
		}
		return c.Kind != kindInstructions && c.Tool == pos[1]
	})
	if i < 0 {
		if *instructions {
			return core.Errorf(core.EConflict, "the instructions of %s are as you accepted them: nothing to accept", pos[0])
		}
		return core.Errorf(core.EConflict, "tool %s of %s waits for no accept: its definition is the accepted one (or the server lists no such tool)", pos[1], pos[0]).
			WithHint("'airlock servers changes " + pos[0] + "' lists what waits")
	}
	c := list[i]
	what := "the definition of " + printable(c.Tool)
	if c.Kind == kindInstructions {
		what = "the instructions"
	}
	switch {
	case *shown != "" && *shown != c.Shown:
		return core.Errorf(core.EConflict, "%s on %s changed again since it was shown: nothing was accepted", what, c.Server).
			WithHint("look at it again ('airlock servers changes " + c.Server + "') and accept that")
	case *shown == "" && !*yes:
		printChange(stdout, c)
		return core.Errorf(core.EInvalid, "nothing accepted yet: read the change above").
			WithHint("to accept it: " + c.Accept + " (or --yes)")
	case *yes:
		printChange(stdout, c)
	}
	if c.Kind == kindInstructions {
		err = instance.Call(ctx, dataDir, "Servers.AcceptInstructionsChange", []any{c.Server, c.Now}, nil)
	} else {
		err = instance.Call(ctx, dataDir, "Servers.AcceptToolChange", []any{c.Server, c.Tool, c.Shown}, nil)
	}
	if err != nil {
		return needsRunning(err, "accepted definitions")
	}
	if c.Kind == kindInstructions {
		fmt.Fprintf(stdout, "accepted the new instructions of %s: agents that connect from now on get them\n", c.Server)
	} else {
		fmt.Fprintf(stdout, "accepted %s on %s: agents see it from now on\n", what, c.Server)
	}
	return nil
}

// printChange writes c for a person to judge: what agents get meanwhile
// and what accepting takes, with the characters that could disguise text
// (controls, direction overrides, zero-width ones) shown as escapes.
func printChange(w io.Writer, c change) {
	since := c.Since.UTC().Format("2006-01-02 15:04 UTC")
	switch c.Kind {
	case kindInstructions:
		fmt.Fprintf(w, "%s  instructions changed (seen %s)\n", c.Server, since)
		fmt.Fprintln(w, "  accepted, what agents get meanwhile:")
		fmt.Fprint(w, quoted(c.Accepted, "    "))
		fmt.Fprintln(w, "  now, what accepting takes:")
		fmt.Fprint(w, quoted(c.Now, "    "))
	case kindNew:
		fmt.Fprintf(w, "%s  new tool %s (seen %s): calls to it ask until you accept it\n", c.Server, printable(c.Tool), since)
		fmt.Fprint(w, indented(c.Now, "    "))
	default:
		fmt.Fprintf(w, "%s  tool %s changed: %s (seen %s)\n", c.Server, printable(c.Tool), strings.Join(c.Fields, ", "), since)
		var was, now map[string]json.RawMessage
		json.Unmarshal([]byte(c.Accepted), &was)
		json.Unmarshal([]byte(c.Now), &now)
		for _, f := range c.Fields {
			fmt.Fprintf(w, "  %s\n", f)
			fmt.Fprintln(w, "    accepted, what agents get meanwhile:")
			fmt.Fprint(w, fieldText(was[f], "      "))
			fmt.Fprintln(w, "    now, what accepting takes:")
			fmt.Fprint(w, fieldText(now[f], "      "))
		}
	}
}

// fieldText renders one field of a definition: a string as its text,
// anything else as indented JSON.
func fieldText(raw json.RawMessage, prefix string) string {
	if len(raw) == 0 {
		return prefix + "(none)\n"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return quoted(s, prefix)
	}
	return indented(string(raw), prefix)
}

// indented is JSON text indented under prefix.
func indented(text, prefix string) string {
	var b bytes.Buffer
	if json.Indent(&b, []byte(text), prefix, "  ") != nil {
		return quoted(text, prefix)
	}
	return prefix + printable(b.String()) + "\n"
}

// quoted is text with each line under prefix, "> " first so that an empty
// line shows; "(none)" for no text.
func quoted(text, prefix string) string {
	if strings.TrimSpace(text) == "" {
		return prefix + "(none)\n"
	}
	var b strings.Builder
	for line := range strings.SplitSeq(strings.TrimRight(text, "\n"), "\n") {
		b.WriteString(prefix + "> " + printable(line) + "\n")
	}
	return b.String()
}

// printable shows control and format characters (a direction override, a
// zero-width space) as \u{…} escapes, newlines and tabs aside: text from a
// server must read on a terminal as it will reach an agent.
func printable(s string) string {
	if !strings.ContainsFunc(s, hidden) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if hidden(r) {
			fmt.Fprintf(&b, `\u{%04X}`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// quoteArg quotes a for a POSIX shell when it needs it, so that a printed
// command can be pasted as it is.
func quoteArg(a string) string {
	if a != "" && !strings.ContainsFunc(a, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./:@%+=,", r)))
	}) {
		return a
	}
	q, err := syntax.Quote(a, syntax.LangPOSIX)
	if err != nil {
		return printable(strconv.Quote(a))
	}
	return printable(q)
}

// hidden reports whether r shows as nothing, or as a blank, on a terminal
// while a model reads it: controls, format characters (direction
// overrides, zero-width ones, tags), separators, private-use and unassigned
// code points, variation selectors (which can carry hidden bytes), and the
// fillers that look like spaces.
func hidden(r rune) bool {
	switch {
	case r == '\n' || r == '\t' || r == ' ':
		return false
	case !unicode.IsGraphic(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Variation_Selector, r):
		return true
	}
	switch r {
	case 0x115F, 0x1160, 0x3164, 0xFFA0, 0x2800, 0x180E, 0x034F:
		return true
	}
	return false
}
