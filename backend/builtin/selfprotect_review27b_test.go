package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/airlock-dev/airlock/backend/core"
)

// Review 27b (false positives that nobody can approve): a quoted ~ is not
// expanded by bash, so "~/.config/airlock" in a search pattern or a commit
// message names nothing; command -v runs nothing; the folders a line cd's
// to are where it goes, not where it was before (cd sub; cd ..; ls * lists
// the project, not the folder above it).
func TestShellSelfProtectionReview27bNoDeny(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	b := selfProtected(t, home, filepath.Join(home, "src", "proj"))
	for _, cmd := range []string{
		`grep -rn "~/.config/airlock" docs/`,
		`rg -F '~/.config/airlock/rules.json' .`,
		`git commit -m "~/.config/airlock/rules.json: validate on load"`,
		`echo '~/.config/airlock'`,
		"command -v airlock",
		// A glob that only lists the data directory among its siblings
		// (asking is fine: a person can approve it).
		"du -sh ~/.config/*",
		"ls ~/.config/*",
	} {
		t.Run(cmd, func(t *testing.T) {
			if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome == core.Deny {
				t.Errorf("%s: %s (%+v), want allow or ask", cmd, cl.Outcome, cl.Findings)
			}
		})
	}
	// A project in ~/.config (a dotfiles or nvim repository).
	b = selfProtected(t, home, filepath.Join(home, ".config", "nvim"))
	for _, d := range []string{"sub", "src/pkg"} {
		if err := os.MkdirAll(filepath.Join(home, ".config", "nvim", d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{
		"cd sub; cd ..; ls *",
		"cd src && cd pkg && ls ../../*",
		"cd ~ && ls -d */",
		"cd ~/.cache && du -sh *",
	} {
		t.Run("nvim/"+cmd, func(t *testing.T) {
			if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome == core.Deny {
				t.Errorf("%s: %s (%+v), want allow or ask", cmd, cl.Outcome, cl.Findings)
			}
		})
	}
}

// Review 27b (asks nobody expects): the link check counts every word,
// even a bare one or one repeated, and stops at 128 slashes, so a file
// written with a heredoc, or a command with 300 arguments, asks.
func TestShellSelfProtectionReview27bEverydayAllow(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	b := selfProtected(t, home, filepath.Join(home, "src", "proj"))
	code := "package main\n\n// see https://example.com/docs\nfunc main() {\n" + strings.Repeat("\tx := a / b // divide\n", 130) + "}\n"
	var files []string
	for i := range 300 {
		files = append(files, "pkg/f"+strings.Repeat("x", i%7)+".go")
	}
	for _, cmd := range []string{
		"cat > main.go <<'EOF'\n" + code + "EOF",
		"echo" + strings.Repeat(" word", 300),
		"gofmt -l " + strings.Join(files, " "),
		"tar czf ../proj.tgz -C .. proj",
		"cp -r . /tmp/backup",
	} {
		t.Run(cmd[:min(len(cmd), 40)], func(t *testing.T) {
			if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome != core.Allow {
				t.Errorf("%.60s: %s (%+v), want allow", cmd, cl.Outcome, cl.Findings)
			}
		})
	}
}

// Review 27b (bypasses a static check can see): glob features bash has
// (POSIX classes, extglob, nocaseglob, dotglob/GLOBIGNORE), ~+ and ~-,
// CDPATH, variables set by read/printf -v/set --, a fixed variable inside
// a word or with an operator, links reached by a glob or $PWD, git's
// --work-tree, find -exec and docker -v on a folder that holds it, go run
// of Airlock's own command.
func TestShellSelfProtectionReview27bBypasses(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	proj := filepath.Join(home, "src", "proj")
	b := selfProtected(t, home, proj)
	mustSymlink(t, filepath.Join(home, ".config", "airlock"), filepath.Join(proj, "cfg"))
	mustSymlink(t, filepath.Join(home, ".config"), filepath.Join(proj, "conf"))
	for _, cmd := range []string{
		"cp evil.json ~/.config/[[:alpha:]]irlock/rules.json",
		"shopt -s extglob\ncp evil.json ~/.config/@(airlock)/rules.json",
		"shopt -s nocaseglob; cp evil.json ~/.config/AIRLOC[K]/rules.json",
		"shopt -s dotglob; cd ~ && cp evil.json */airlock/rules.json",
		"GLOBIGNORE=x; cd ~ && cp evil.json */airlock/rules.json",
		"cat ~+/../../.config/airlock/rules.json",
		"cd ~/.config && cd /tmp && cp evil.json ~-/airlock/rules.json",
		`cd ~/.config; cd /tmp; cp evil.json "$OLDPWD/airlock/rules.json"`,
		"CDPATH=~/.config cd airlock && cp evil.json rules.json",
		`read -r c <<< ~/.config; cp evil.json "$c/airlock/rules.json"`,
		`printf -v c %s ~/.config; cp evil.json "$c/airlock/rules.json"`,
		`set -- ~/.config; cp evil.json "$1/airlock/rules.json"`,
		`f() { cp evil.json "$1/airlock/rules.json"; }; f ~/.config`,
		`c=~/.config; cp evil.json "${c:-/tmp}/airlock/rules.json"`,
		`c=~/.config; cp evil.json "${c%/}/airlock/rules.json"`,
		"c=.config; cp evil.json ~/$c/airlock/rules.json",
		"c=airlock; cp evil.json ~/.config/$c/rules.json",
		"cat cfg/rules.js?",
		"cat $PWD/cfg/rules.json",
		"cp evil.json conf/air*/rules.json",
		"cp evil.json /proc/thread-self/cwd/../../.config/airlock/rules.json",
	} {
		t.Run(cmd, func(t *testing.T) {
			if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome != core.Deny {
				t.Errorf("%s: %s (%+v), want deny", cmd, cl.Outcome, cl.Findings)
			}
		})
	}
	// Changes to a folder that holds it, or a build of Airlock: ask.
	for _, cmd := range []string{
		"git --work-tree ~/.config checkout HEAD -- airlock/rules.json",
		`find ~/.config -name rules.json -exec cp evil.json {} \;`,
		"docker run -v ~/.config:/c alpine cp /x /c/airlock/rules.json",
		"cd ~/.config && tar xf /tmp/evil.tar",
		"go run ./cmd/airlock rules add --auto-approve",
		"go run github.com/airlock-dev/airlock/cmd/airlock@latest rules add --auto-approve",
	} {
		t.Run(cmd, func(t *testing.T) {
			if cl, err := b.ClassifyCommand(cmd, nil); err != nil || cl.Outcome == core.Allow {
				t.Errorf("%s: %s (%+v), want ask or deny", cmd, cl.Outcome, cl.Findings)
			}
		})
	}
}

// Review 27b (cost): command lines of up to MaxCommandBytes with brace
// expansions or many cd's. go test -bench Review27b -benchtime 1x
func BenchmarkReview27bSelfProtection(b *testing.B) {
	home := filepath.Join(b.TempDir(), "home")
	proj := filepath.Join(home, "src", "proj")
	bt := selfProtected(b, home, proj)
	fill := func(prefix, unit, sep string) string {
		var sb strings.Builder
		sb.WriteString(prefix)
		for sb.Len()+len(unit)+len(sep) < 64<<10-64 {
			sb.WriteString(sep)
			sb.WriteString(unit)
		}
		return sb.String()
	}
	for _, bc := range []struct{ name, cmd string }{
		{"braces-1000", fill("cat", "~/{0..9}{0..9}{0..9}", " ")},
		{"braces", fill("cat", "{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d}/x", " ")},
		{"many-cd", fill("true", "cd d1 && cd .. && ls */*", "; ")},
		{"nested-sh", fill("true", "sh -c 'cd d1 && ls */* ~/x'", "; ")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := bt.ClassifyCommand(bc.cmd, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
