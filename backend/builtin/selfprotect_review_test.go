package builtin_test

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/store"
)

// selfProtected is a Builtin whose data directory is home/.config/airlock
// and whose one allowed folder (where commands start) is proj.
func selfProtected(t testing.TB, home, proj string) *builtin.Builtin {
	t.Helper()
	data := filepath.Join(home, ".config", "airlock")
	mustWrite(t, filepath.Join(data, "rules.json"), `{"rules":[]}`)
	mustWrite(t, filepath.Join(proj, "notes.txt"), "mine")
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	env := func() []string { return append(testEnviron(), "HOME="+home) }
	b, err := builtin.New(builtin.Options{Store: db, DataDir: data, Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AllowPath(proj); err != nil {
		t.Fatal(err)
	}
	return b
}

// Review (red team): command lines that name the data directory in ways
// fixed before the command runs, which the policy still allowed. The
// project is outside the home folder (/srv, /workspace, a second disk).
func TestShellSelfProtectionStaticBypasses(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	data := filepath.Join(home, ".config", "airlock")
	b := selfProtected(t, home, filepath.Join(base, "proj"))
	for _, cmd := range []string{
		// An option's value attached to a short option.
		"curl -o" + filepath.Join(data, "rules.json") + " http://example.com/evil",
		"tar -C$HOME/.config/airlock -xf evil.tar",
		// A relative path after cd, pushd or -C into a folder above it.
		"cd ~/.config; cp evil.json airlock/rules.json",
		"cd && cp evil.json .config/airlock/rules.json",
		"pushd ~/.config && cp evil.json airlock/rules.json",
		"env -C ~/.config cp evil.json airlock/rules.json",
		// Words the checker never looks at: loop items, here-strings,
		// array assignments.
		`for f in ~/.config/airlock/rules.json; do cp evil.json "$f"; done`,
		`read -r f <<< ~/.config/airlock/rules.json; cp evil.json "$f"`,
		`f=(~/.config/airlock/rules.json); cp evil.json "${f[0]}"`,
		// A variable assigned a folder above it, a fixed text after.
		`c=~/.config; cp evil.json "$c/airlock/rules.json"`,
		// HOME changed before ~ is expanded.
		"HOME=~/.config; cp evil.json ~/airlock/rules.json",
		// $PWD is known before the command runs, as $HOME is.
		`cp evil.json "$PWD/../home/.config/airlock/rules.json"`,
	} {
		t.Run(cmd, func(t *testing.T) {
			if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome != core.Deny {
				t.Errorf("%s: %s (%+v), want deny", cmd, cl.Outcome, cl.Findings)
			}
		})
	}
	// Commands that change a folder holding it ask: a person sees them
	// (cp x ~ is everyday use, cp -r x/.config ~ is not).
	for _, cmd := range []string{
		// A link made by the same command line.
		"ln -s ~/.config c; cp evil.json c/airlock/rules.json",
		// A folder above it copied or moved onto (rsync/cp -r merge).
		"cp -r evil/airlock ~/.config/",
		"rsync -a evil/ ~/.config/",
		"mv ~/.config old",
	} {
		t.Run(cmd, func(t *testing.T) {
			if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome == core.Allow {
				t.Errorf("%s: %s (%+v), want ask or deny", cmd, cl.Outcome, cl.Findings)
			}
		})
	}
}

// ~USER is the home folder of USER: the user who runs Airlock names its
// data directory so. (The data directory here is a name under the real
// home folder that nothing creates: the test writes nothing there.)
func TestShellSelfProtectionTildeUser(t *testing.T) {
	u, err := user.Current()
	if err != nil || u.Username == "" || u.HomeDir == "" || strings.ContainsAny(u.Username, " \\") {
		t.Skip("no user name and home folder")
	}
	data := filepath.Join(u.HomeDir, ".airlock-test-"+filepath.Base(t.TempDir()))
	db, err := store.Open(filepath.Join(t.TempDir(), store.FileName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	b, err := builtin.New(builtin.Options{Store: db, DataDir: data, Environ: testEnviron})
	if err != nil {
		t.Fatal(err)
	}
	cmd := "cp evil.json ~" + u.Username + "/" + filepath.Base(data) + "/rules.json"
	if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome != core.Deny {
		t.Errorf("%s: %s (%+v), want deny", cmd, cl.Outcome, cl.Findings)
	}
	if _, err := os.Stat(data); err == nil {
		t.Errorf("%s was created", data)
	}
}

// Review (false positives): everyday commands in a project under the home
// folder that the protection refuses outright, with nobody able to
// approve them. A shell glob's * does not match a leading dot, so */* from
// the home folder never names .config/airlock; a program a project built
// (./bin/airlock) is not the installed Airlock.
func TestShellSelfProtectionEverydayCommands(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	b := selfProtected(t, home, filepath.Join(home, "src", "proj"))
	for _, cmd := range []string{
		"ls */*",
		"grep -n TODO */*",
		"wc -l */*/*",
		"ls ../*/*",
	} {
		t.Run(cmd, func(t *testing.T) {
			if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome != core.Allow {
				t.Errorf("%s: %s (%+v), want allow", cmd, cl.Outcome, cl.Findings)
			}
		})
	}
	for _, cmd := range []string{
		"go build -o bin/airlock . && ./bin/airlock --version",
	} {
		t.Run(cmd, func(t *testing.T) {
			if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome == core.Deny {
				t.Errorf("%s: %s (%+v), want allow or ask", cmd, cl.Outcome, cl.Findings)
			}
		})
	}
}

// Review (performance): the symbolic-link check walked each word's path up
// from its end, rebuilding the rest at every step and resolving links at
// each: quadratic in a word's length, times every word; one command line
// within MaxCommandBytes kept the classifier busy for minutes. Now a word
// longer than a path the system opens is no path, and past a bounded
// number of file lookups or words the command asks (what cannot be
// checked asks), so the work stays bounded whatever the line.
func TestShellSelfProtectionLongWordsAsk(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	proj := filepath.Join(home, "proj")
	b := selfProtected(t, home, proj)
	if err := os.MkdirAll(filepath.Join(proj, "d", "d", "d", "d", "d", "d", "d", "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	outcome := func(cmd string) builtin.Classification {
		cl, err := b.ClassifyCommand(cmd, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cl
	}
	if cl := outcome("cat {a,b,c,d,e,f,g,h,i,j}{a,b,c,d,e,f,g,h,i,j}{a,b,c,d,e,f,g,h,i,j}" + strings.Repeat("x/", 30000)); cl.Outcome != core.Allow {
		t.Errorf("a 60 KB word (no path the system opens): %s (%+v), want allow", cl.Outcome, cl.Findings)
	}
	protectionAsks := func(cl builtin.Classification) bool {
		return cl.Outcome == core.Ask && slices.ContainsFunc(cl.Findings, func(f builtin.Finding) bool { return f.Rule == "airlock-data" })
	}
	// More file lookups than the check makes: existing folders, deep, each
	// path another.
	var deep strings.Builder
	for i := range 600 {
		fmt.Fprintf(&deep, " d/d/d/d/d/d/d/d/x%d", i)
	}
	if cl := outcome("cat" + deep.String()); !protectionAsks(cl) {
		t.Errorf("600 deep paths: %s (%+v), want ask: too many to check", cl.Outcome, cl.Findings)
	}
	// More words after brace expansion than the check looks at.
	if cl := outcome("echo" + strings.Repeat(" {0..9}{0..9}{0..9}", 20)); !protectionAsks(cl) {
		t.Errorf("20,000 words: %s (%+v), want ask: too many to check", cl.Outcome, cl.Findings)
	}
}
