package main

import (
	"bufio"
	"debug/buildinfo"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

func TestWindowCommand(t *testing.T) {
	for args, want := range map[string]bool{
		"":                               true,
		"--data-dir /x":                  true,
		"--data-dir=/x":                  true,
		"--addr 127.0.0.1:1":             true,
		"--data-dir /x --allow-path .":   true,
		"serve":                          false,
		"--data-dir /x serve":            false,
		"--data-dir=/x servers list":     false,
		"version":                        false,
		"bridge --token t":               false,
		"nonsense":                       false,
		"--data-dir /x agents add a b c": false,
	} {
		if got := windowCommand(strings.Fields(args)); got != want {
			t.Errorf("windowCommand(%q) = %v, want %v", args, got, want)
		}
	}
}

func settings(kv ...string) []debug.BuildSetting {
	var s []debug.BuildSetting
	for i := 0; i < len(kv); i += 2 {
		s = append(s, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
	}
	return s
}

func TestBuildKeyTellsBuildsApart(t *testing.T) {
	const stamp = "0123456789abcdef0123456789abcdef"
	build := func(kv ...string) *debug.BuildInfo {
		base := []string{"vcs", "git", "vcs.revision", "abc", "vcs.modified", "true", "-ldflags", "-w -s -X main.sourceStamp=" + stamp, "GOOS", "linux", "GOARCH", "amd64"}
		bi := &debug.BuildInfo{GoVersion: "go1.26.8", Path: "github.com/airlock-dev/airlock", Main: debug.Module{Path: "github.com/airlock-dev/airlock", Version: "(devel)"},
			Deps: []*debug.Module{{Path: "modernc.org/sqlite", Version: "v1.23.1", Sum: "h1:x"}}}
		// Later settings override earlier ones, as a map would read them.
		bi.Settings = settings(append(base, kv...)...)
		return bi
	}
	desktop := build("-tags", "desktop,production,webkit2_41", "CGO_ENABLED", "1")
	desktop.Deps = append(desktop.Deps, &debug.Module{Path: "github.com/wailsapp/wails/v2", Version: "v2.12.0", Sum: "h1:w"})
	headless := build("-tags", "headless", "CGO_ENABLED", "0")
	if !sameBuild(desktop, headless) {
		t.Fatalf("the desktop and headless builds of one source differ:\n%s\n%s", buildKey(desktop), buildKey(headless))
	}
	if sameBuild(headless, desktop) {
		t.Errorf("a build with modules the desktop one lacks is the same build")
	}
	for name, other := range map[string]*debug.BuildInfo{
		"another source":     build("-ldflags", "-w -s -X main.sourceStamp=ffffffffffffffffffffffffffffffff"),
		"other ldflags":      build("-ldflags", "-X main.sourceStamp="+stamp+" -X main.x=1"),
		"another Go":         func() *debug.BuildInfo { b := build(); b.GoVersion = "go1.26.9"; return b }(),
		"another dependency": func() *debug.BuildInfo { b := build(); b.Deps[0].Sum = "h1:y"; return b }(),
	} {
		if sameBuild(desktop, other) {
			t.Errorf("%s: the same build as the desktop one", name)
		}
	}
	// No stamp, an empty one (a stamp script that failed) or a malformed
	// one: the source cannot be known, whatever git says.
	for name, unknown := range map[string]*debug.BuildInfo{
		"no stamp, clean commit": build("-ldflags", "-w -s", "vcs.modified", "false"),
		"empty stamp":            build("-ldflags", "-w -s -X main.sourceStamp="),
		"short stamp":            build("-ldflags", "-X main.sourceStamp=0123"),
		"stamp with more after":  build("-ldflags", "-X main.sourceStamp="+stamp+"x"),
	} {
		if k := buildKey(unknown); k != "" {
			t.Errorf("%s: key %q, want none (the source cannot be known)", name, k)
		}
		if sameBuild(unknown, unknown) {
			t.Errorf("%s: the same build as itself", name)
		}
	}
}

// TestDesktopServeHandsOff runs the built binaries (go tool task test builds
// them first; AIRLOCK_BIN names the desktop one): `airlock serve` of a clean
// build runs in the headless binary beside it, in the same process, and
// AIRLOCK_HANDOFF=0 keeps it in the desktop binary.
func TestDesktopServeHandsOff(t *testing.T) {
	bin := os.Getenv("AIRLOCK_BIN")
	if runtime.GOOS != "linux" {
		t.Skip("it tells which program a process runs by /proc/PID/exe, which only Linux has; CI runs on Linux")
	}
	if bin == "" {
		t.Skip("AIRLOCK_BIN (the desktop build) is not set: run through go tool task test, which builds it")
	}
	headless := filepath.Join(filepath.Dir(bin), headlessName)
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	// go tool task build stamps both binaries with their source; a build
	// without it (a plain go build) serves itself.
	clean := buildKey(bi) != ""
	if os.Getenv("CI") != "" && !clean {
		t.Fatalf("%s has no source stamp in CI (go tool task build sets one): %v", bin, bi.Settings)
	}
	for _, tc := range []struct {
		env  string
		want string
	}{{"", map[bool]string{true: headless, false: bin}[clean]}, {handoffEnv + "=0", bin}} {
		cmd := exec.Command(bin, "serve", "--data-dir", t.TempDir(), "--addr", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), tc.env)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Ready once it prints its endpoints.
		sc := bufio.NewScanner(out)
		ready := false
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "MCP endpoint: ") {
				ready = true
				break
			}
		}
		exe, _ := os.Readlink("/proc/" + strconv.Itoa(cmd.Process.Pid) + "/exe")
		cmd.Process.Signal(os.Interrupt)
		for sc.Scan() {
		}
		if err := cmd.Wait(); err != nil {
			t.Errorf("%s: airlock serve ended with %v", tc.env, err)
		}
		if !ready {
			t.Fatalf("%s: airlock serve never printed its MCP endpoint", tc.env)
		}
		if exe != tc.want {
			t.Errorf("%q: airlock serve ran in %s, want %s", tc.env, exe, tc.want)
		}
	}
}
