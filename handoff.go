package main

import (
	"debug/buildinfo"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
)

// Every command but the desktop window (`airlock serve`, the CLI, the
// bridge) needs nothing of GTK and WebKit, yet the desktop binary loads them
// before main runs: about 45 MB of resident memory and 50 ms at every start.
// So the desktop build hands such a command to the headless build beside it
// (build/bin/airlock-headless, which `go tool task build` makes too), in the
// same process (exec), when that binary is the same build: the same source
// (by the stamp go tool task build gives both), the same Go and modules,
// and a file nobody else could have put there. Otherwise, or with AIRLOCK_HANDOFF=0, it
// runs the command itself, as before. handOff is in both builds; only the
// desktop one (app.go) calls it.

const (
	// handoffEnv=0 keeps every command in the desktop binary.
	handoffEnv = "AIRLOCK_HANDOFF"
	// handedFromEnv tells the headless build which binary the user ran, so
	// the commands Airlock shows (client configs) name it, not the headless one.
	handedFromEnv = "AIRLOCK_HANDED_OFF_FROM"
	headlessName  = "airlock-headless"
)

// windowCommand reports whether args (os.Args[1:]) open the desktop window:
// no command, only flags (the way run parses them).
func windowCommand(args []string) bool {
	if len(args) > 1 && (args[0] == "--data-dir" || args[0] == "-data-dir") && !strings.HasPrefix(args[1], "-") {
		args = args[2:]
	} else if len(args) > 0 && strings.HasPrefix(args[0], "--data-dir=") {
		args = args[1:]
	}
	return len(args) == 0 || strings.HasPrefix(args[0], "-")
}

// handOffTarget is the headless build to run args in instead of this
// binary, or "" to run them here.
func handOffTarget(args []string, getenv func(string) string) string {
	if getenv(handoffEnv) == "0" || windowCommand(args) {
		return ""
	}
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	if p, err := filepath.EvalSymlinks(self); err == nil {
		self = p
	}
	other := filepath.Join(filepath.Dir(self), headlessName)
	if fi, err := os.Stat(other); err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return ""
	}
	own, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	theirs, err := buildinfo.ReadFile(other)
	if err != nil {
		return ""
	}
	if !sameBuild(own, theirs) {
		return ""
	}
	return other
}

// sourceStamp is the hash of the source this binary was built from
// (build/scripts/stamp.sh, set with -ldflags -X by go tool task build).
var sourceStamp string

// buildKey identifies the source a binary was built from, leaving out what
// tells the desktop and headless builds apart (build tags, cgo): "" when it
// cannot be known. The source is known only from the stamp go tool task
// build sets (-X main.sourceStamp=<32 hex digits>, part of -ldflags): a
// build without it, or with an empty or malformed one (a stamp script that
// failed; found by a code review), hands nothing over. A VCS stamp is no
// proof: it leaves out the built UI, which git ignores.
func buildKey(bi *debug.BuildInfo) string {
	s := map[string]string{}
	for _, kv := range bi.Settings {
		s[kv.Key] = kv.Value
	}
	if !stampRE.MatchString(s["-ldflags"]) {
		return ""
	}
	var b strings.Builder
	fmt.Fprintln(&b, bi.GoVersion, bi.Path, bi.Main.Path, bi.Main.Version, bi.Main.Sum)
	for _, k := range []string{"-ldflags", "-trimpath", "GOOS", "GOARCH", "GOAMD64", "GOARM64"} {
		fmt.Fprintf(&b, "%s=%s\n", k, s[k])
	}
	return b.String()
}

// stampRE finds a well-formed source stamp in -ldflags.
var stampRE = regexp.MustCompile(`(^|\s)-X[= ]main\.sourceStamp=[0-9a-f]{32}(\s|$)`)

// sameBuild reports whether the headless build theirs is of the source and
// modules the desktop build own is: the same key, and every module the
// headless build has (a subset: it leaves Wails out) at the same version.
func sameBuild(own, theirs *debug.BuildInfo) bool {
	if k := buildKey(own); k == "" || k != buildKey(theirs) {
		return false
	}
	mods := map[string]string{}
	for _, d := range own.Deps {
		mods[d.Path] = module(d)
	}
	for _, d := range theirs.Deps {
		if m, ok := mods[d.Path]; !ok || m != module(d) {
			return false
		}
	}
	return true
}

func module(d *debug.Module) string {
	m := d.Version + " " + d.Sum
	if r := d.Replace; r != nil {
		m += " => " + r.Path + " " + r.Version + " " + r.Sum
	}
	return m
}

// handedOffFrom is the binary the user ran when the desktop build handed
// this command over ("" otherwise). It is read once and taken out of the
// environment, which the servers and agents Airlock starts inherit.
func handedOffFrom() string {
	from := os.Getenv(handedFromEnv)
	os.Unsetenv(handedFromEnv)
	if !filepath.IsAbs(from) {
		return ""
	}
	return from
}
