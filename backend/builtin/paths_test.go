package builtin_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/airlock-dev/airlock/backend/builtin"
	"github.com/airlock-dev/airlock/backend/core"
)

// attackFixture adds the traps of the attack corpus to a fixture: links
// and chains of links out of the root, links into /proc, loops.
func attackFixture(tb testing.TB) *fixture {
	f := newFixture(tb)
	r := f.root
	mustWrite(tb, filepath.Join(r, "sub", "inner.txt"), "INSIDE")
	mustWrite(tb, filepath.Join(r, "%2e%2e", "note.txt"), "INSIDE") // a folder literally named %2e%2e
	links := []struct{ target, link string }{
		{filepath.Join(f.outside, "secret.txt"), "link_out"},
		{"../outside/secret.txt", "link_out_rel"},
		{f.outside, "dir_out"},
		{"../outside", "dir_out_rel"},
		{"chain2", "chain1"},
		{"chain3", "chain2"},
		{"../outside/secret.txt", "chain3"},
		{"sub/chain_dir2", "chain_dir1"},
		{"../../outside", filepath.Join("sub", "chain_dir2")},
		{"..", filepath.Join("sub", "up")},
		{"../..", filepath.Join("sub", "upup")},
		{"/proc/self/root", "proc_root"},
		{"/proc/self/cwd", "proc_cwd"},
		{"/proc/1/root", "proc_init_root"},
		{"/", "slash"},
		{"/etc", "etc"},
		{"loop2", "loop1"},
		{"loop1", "loop2"},
		{filepath.Join(r, "inside.txt"), "abs_inside"}, // absolute: never followed, even inward
		{"inside.txt", "rel_inside"},                   // relative and inside: followed
		{f.base, "base_link"},
		{"../root/../outside/secret.txt", "dotdot_via_root"},
	}
	for _, l := range links {
		mustSymlink(tb, l.target, filepath.Join(r, l.link))
	}
	return f
}

// readAttacks are paths that must never read the secret (nor anything
// outside the root). Each is refused, or names nothing that exists.
func readAttacks(f *fixture) []string {
	secret := filepath.Join(f.outside, "secret.txt")
	attacks := []string{
		// Traversal.
		"../outside/secret.txt", "./../outside/secret.txt", "sub/../../outside/secret.txt",
		"sub/../../../" + strings.TrimPrefix(secret, "/"), "..", "../", "../..", "../../..",
		strings.Repeat("../", 30) + strings.TrimPrefix(secret, "/"), "..//outside//secret.txt",
		"sub/./../.././outside/secret.txt", "sub/inner.txt/../../../outside/secret.txt",
		"../root/../outside/secret.txt", "./sub/../../outside/./secret.txt",
		// Absolute.
		secret, f.outside, "/etc/passwd", "/etc/shadow", "/", "//etc/passwd", "/./etc/passwd",
		f.root + "/../outside/secret.txt", f.root + "/sub/../../outside/secret.txt", f.root + "/..",
		f.root + "/" + strings.Repeat("../", 20) + strings.TrimPrefix(secret, "/"), f.base,
		f.root + "_sibling/secret.txt", f.root + "../outside/secret.txt",
		// /proc.
		"/proc/self/root" + secret, "/proc/self/cwd/../outside/secret.txt", "/proc/1/root" + secret,
		"/proc/self/environ", "/proc/self/fd/0", "/proc/self/mem", "/dev/zero", "/dev/stdin",
		"proc_root" + secret, "proc_cwd/x", "proc_init_root/etc/passwd", "proc_root/etc/passwd",
		// Symlinks and chains out.
		"link_out", "link_out_rel", "dir_out/secret.txt", "dir_out_rel/secret.txt", "dir_out", "dir_out/",
		"chain1", "chain2", "chain3", "chain_dir1/secret.txt", "sub/chain_dir2/secret.txt",
		"sub/upup/outside/secret.txt", "sub/up/../outside/secret.txt", "sub/upup", "slash/etc/passwd",
		"slash" + secret, "etc/passwd", "base_link/outside/secret.txt", "dotdot_via_root",
		"loop1", "loop2/x", "./link_out", "sub/../link_out", "sub/up/link_out", "sub/up/dir_out/secret.txt",
		"abs_inside",
		// Percent-encoded and Unicode look-alike dots and slashes: names,
		// never decoded.
		"%2e%2e/outside/secret.txt", "%2E%2E/outside/secret.txt", "%2e%2e%2foutside%2fsecret.txt",
		"..%2foutside%2fsecret.txt", "%252e%252e/outside/secret.txt", "%2e%2e/note.txt/../../outside/secret.txt",
		"\u2025/outside/secret.txt", "\uff0e\uff0e/outside/secret.txt", "\u2024\u2024/outside/secret.txt",
		".\u200b./outside/secret.txt", "\uff0e\uff0e\uff0foutside\uff0fsecret.txt", "..\u2215outside\u2215secret.txt",
		"..\u2044outside\u2044secret.txt", "%c0%ae%c0%ae/outside/secret.txt", "\xc0\xae\xc0\xae/outside/secret.txt",
		"..\\outside\\secret.txt", "..\\..\\outside\\secret.txt", "\u2e2e\u2e2e/outside/secret.txt",
		"\ufe52\ufe52/outside/secret.txt", "..\u0338/outside/secret.txt", "\u0130../outside/secret.txt",
		// NUL bytes.
		"inside.txt\x00../outside/secret.txt", "\x00", "../outside/secret.txt\x00.txt", "sub\x00/../../outside",
		secret + "\x00",
		// Overlong.
		strings.Repeat("a/", 3000) + "x", strings.Repeat("../", 2000) + "etc/passwd", strings.Repeat("x", 300),
		strings.Repeat("sub/up/", 700) + "../outside/secret.txt", "/" + strings.Repeat("a", 5000),
		// Home, variables and Windows spellings: names, never expanded.
		"~/.ssh/id_rsa", "~root/.bashrc", "$HOME/.bashrc", "${HOME}/x", "C:\\Windows\\win.ini",
		"\\\\server\\share\\x", "file://" + secret, "file:" + secret,
		// Empty-ish.
		"", " ", ".",
	}
	return attacks
}

// TestReadAttackCorpus: file_read reaches nothing outside the root through
// any of the corpus' paths, directly or through the policy.
func TestReadAttackCorpus(t *testing.T) {
	f := attackFixture(t)
	attacks := readAttacks(f)
	if len(attacks) < 100 {
		t.Fatalf("the read attack corpus has %d paths, want at least 100", len(attacks))
	}
	ctx := context.Background()
	escapes := 0
	for i, p := range attacks {
		t.Run(fmt.Sprintf("%03d", i), func(t *testing.T) {
			res, err := f.b.ReadFile(ctx, builtin.ReadArgs{Path: p})
			if err == nil {
				escapes++
				t.Errorf("ReadFile(%q) succeeded (%d bytes), want a refusal", p, len(res.Content))
			}
			if strings.Contains(res.Content, secretMarker) {
				t.Errorf("ReadFile(%q) returned the secret", p)
			}
			v := f.b.Check(ctx, &core.Request{Kind: core.KindToolCall, Server: builtin.ServerFileRead, Name: builtin.ToolFileRead, Args: jsonArgs(t, map[string]any{"path": p})})
			if v.Outcome != core.Deny {
				t.Errorf("Check(file_read %q) = %s, want deny", p, v.Outcome)
			}
		})
	}
	if escapes > 0 {
		t.Errorf("%d of %d read attacks succeeded, want 0", escapes, len(attacks))
	}
}

// TestReadRefusalReasons: the refusals say what happened.
func TestReadRefusalReasons(t *testing.T) {
	f := attackFixture(t)
	if err := syscall.Mkfifo(filepath.Join(f.root, "pipe"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path, code, mentions string
	}{
		{"../outside/secret.txt", builtin.EPathOutsideRoots, "climbs out"},
		{filepath.Join(f.outside, "secret.txt"), builtin.EPathOutsideRoots, "outside the allowed folders"},
		{"link_out", builtin.EPathOutsideRoots, "absolute path"},
		{"link_out_rel", builtin.EPathOutsideRoots, "link_out_rel is a symbolic link to ../outside/secret.txt"},
		{"chain1", builtin.EPathOutsideRoots, "chain3 is a symbolic link"},
		{"dir_out_rel/secret.txt", builtin.EPathOutsideRoots, "dir_out_rel"},
		{"sub/upup/outside/secret.txt", builtin.EPathOutsideRoots, "sub/upup"},
		{"proc_root/etc/passwd", builtin.EPathOutsideRoots, "/proc/self/root"},
		{"loop1", builtin.EInvalidPath, "too many symbolic links"},
		{"inside.txt\x00x", builtin.EInvalidPath, "NUL"},
		{strings.Repeat("x", 300), builtin.EInvalidPath, "300 bytes"},
		{strings.Repeat("a/", 3000), builtin.EInvalidPath, "limit is 4096"},
		{"%2e%2e/outside/secret.txt", core.ENotFound, "does not exist"},
		{"sub", builtin.ENotAFile, "folder"},
		{"", builtin.EInvalidPath, "empty"},
		// A shell would expand it; the file tools would make a folder "~".
		{"~/notes.txt", builtin.EInvalidPath, "~ is not expanded"},
		// In words, not a mode string such as p--------- (found by a
		// new-user test).
		{"pipe", builtin.ENotAFile, "pipe is a named pipe (FIFO), not a regular file"},
		// A trailing slash names a folder, as the system has it (found by
		// a new-user test: it read the file).
		{"inside.txt/", builtin.ENotAFile, "ends with a slash"},
		{"inside.txt/.", builtin.ENotAFile, "ends with a slash"},
	} {
		_, err := f.b.ReadFile(context.Background(), builtin.ReadArgs{Path: tc.path})
		if code(err) != tc.code || !strings.Contains(core.ErrorMessage(err), tc.mentions) {
			t.Errorf("ReadFile(%.40q) = %v; want code %s mentioning %q", tc.path, err, tc.code, tc.mentions)
		}
	}
}

// TestLinksInsideAreFollowed: confinement does not break ordinary links.
func TestLinksInsideAreFollowed(t *testing.T) {
	f := attackFixture(t)
	for _, p := range []string{"rel_inside", "sub/up/inside.txt", "sub/../inside.txt", filepath.Join(f.root, "rel_inside"), "%2e%2e/note.txt"} {
		res, err := f.b.ReadFile(context.Background(), builtin.ReadArgs{Path: p})
		if err != nil || res.Content != "INSIDE" {
			t.Errorf("ReadFile(%q) = %q, %v; want INSIDE", p, res.Content, err)
		}
	}
}

// TestWriteAttackCorpus: file_write creates or changes nothing outside the
// root through any of the corpus' paths; what it writes lands inside.
func TestWriteAttackCorpus(t *testing.T) {
	f := attackFixture(t)
	attacks := readAttacks(f)
	newOutside := filepath.Join(f.outside, "created.txt")
	attacks = append(attacks,
		newOutside, "../outside/created.txt", "dir_out/created.txt", "dir_out_rel/created.txt",
		"chain_dir1/created.txt", "sub/upup/outside/created.txt", "dir_out/new/deeper/created.txt",
		"proc_root"+newOutside, "/proc/self/root"+newOutside, "base_link/outside/created.txt",
		"slash"+newOutside, "../created-beside-root.txt", f.base+"/created-in-base.txt",
	)
	outsideBefore := snapshot(t, f.outside)
	baseEntries := func() []string {
		ents, err := os.ReadDir(f.base)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "airlock.db") {
				names = append(names, e.Name())
			}
		}
		return names
	}
	baseBefore := baseEntries()
	ctx := context.Background()
	for i, p := range attacks {
		t.Run(fmt.Sprintf("%03d", i), func(t *testing.T) {
			marker := fmt.Sprintf("written by attack %d", i)
			_, err := f.b.WriteFile(ctx, builtin.WriteArgs{Path: p, Content: marker, Overwrite: true})
			if err == nil {
				// Only a literal name inside the root may be written.
				if !landedInside(t, f.root, marker) {
					t.Errorf("WriteFile(%q) succeeded but the content is nowhere inside the root", p)
				}
			}
			if diff := cmp.Diff(outsideBefore, snapshot(t, f.outside)); diff != "" {
				t.Fatalf("WriteFile(%q) changed the outside folder (-before +after):\n%s", p, diff)
			}
			if diff := cmp.Diff(baseBefore, baseEntries()); diff != "" {
				t.Fatalf("WriteFile(%q) changed the folder around the root (-before +after):\n%s", p, diff)
			}
		})
	}
}

// landedInside reports whether some file under root holds marker.
func landedInside(t *testing.T, root, marker string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); string(b) == marker {
				found = true
			}
		}
		return nil
	})
	return found
}

// TestSymlinkSwappedBetweenCheckAndUse: the policy checks a path while it
// is an ordinary folder; a link out is swapped in before the handler runs;
// the handler, working through its os.Root handle, refuses.
func TestSymlinkSwappedBetweenCheckAndUse(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	dir := filepath.Join(f.root, "work")
	mustWrite(t, filepath.Join(dir, "secret.txt"), "INSIDE")
	req := func(server, tool string, args map[string]any) *core.Request {
		return &core.Request{Kind: core.KindToolCall, Server: server, Name: tool, Args: jsonArgs(t, args)}
	}
	readReq := req(builtin.ServerFileRead, builtin.ToolFileRead, map[string]any{"path": "work/secret.txt"})
	writeReq := req(builtin.ServerFileWrite, builtin.ToolFileWrite, map[string]any{"path": "work/new.txt", "content": "x"})
	for _, r := range []*core.Request{readReq, writeReq} {
		if v := f.b.Check(ctx, r); v.Outcome != core.Allow {
			t.Fatalf("Check(%s) before the swap = %+v, want allow", r.Name, v)
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	mustSymlink(t, f.outside, dir)

	res, err := f.b.ReadFile(ctx, builtin.ReadArgs{Path: "work/secret.txt"})
	if err == nil || strings.Contains(res.Content, secretMarker) {
		t.Errorf("ReadFile after the swap = %q, %v; want a refusal", res.Content, err)
	}
	if code(err) != builtin.EPathOutsideRoots {
		t.Errorf("ReadFile after the swap: code %s, want %s (%v)", code(err), builtin.EPathOutsideRoots, err)
	}
	if _, err := f.b.WriteFile(ctx, builtin.WriteArgs{Path: "work/new.txt", Content: "x"}); code(err) != builtin.EPathOutsideRoots {
		t.Errorf("WriteFile after the swap: %v, want %s", err, builtin.EPathOutsideRoots)
	}
	if _, err := os.Lstat(filepath.Join(f.outside, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("WriteFile after the swap created %s", filepath.Join(f.outside, "new.txt"))
	}
}

// TestSymlinkSwappedDuringCalls races a link that flips between a folder
// inside and the folder outside against reads and writes through it: no
// call may ever read the secret or write outside.
func TestSymlinkSwappedDuringCalls(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	mustWrite(t, filepath.Join(f.root, "real", "secret.txt"), "INSIDE")
	flip := filepath.Join(f.root, "flip")
	mustSymlink(t, "real", flip)

	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		targets := []string{f.outside, "real"}
		for i := 0; !stop.Load(); i++ {
			tmp := filepath.Join(f.root, fmt.Sprintf(".flip-%d", i))
			if err := os.Symlink(targets[i%2], tmp); err != nil {
				t.Error(err)
				return
			}
			if err := os.Rename(tmp, flip); err != nil { // atomic replacement of the link
				t.Error(err)
				return
			}
		}
	}()
	const rounds = 2000
	inside, refused := 0, 0
	for i := range rounds {
		res, err := f.b.ReadFile(ctx, builtin.ReadArgs{Path: "flip/secret.txt"})
		switch {
		case strings.Contains(res.Content, secretMarker):
			t.Fatalf("round %d: read the secret through the flipping link", i)
		case err == nil:
			inside++
		default:
			refused++
		}
		f.b.WriteFile(ctx, builtin.WriteArgs{Path: fmt.Sprintf("flip/new-%d.txt", i), Content: "x"})
	}
	stop.Store(true)
	wg.Wait()
	ents, err := os.ReadDir(f.outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the outside folder holds %v after the race, want only secret.txt", names)
	}
	t.Logf("%d reads inside, %d refused", inside, refused)
}

// FuzzResolvePath: whatever the path, file_read never returns the secret
// and file_write never creates or changes anything outside the root.
func FuzzResolvePath(f *testing.F) {
	fx := attackFixture(f)
	for _, p := range readAttacks(fx) {
		f.Add(p)
	}
	for _, p := range []string{"inside.txt", "sub/inner.txt", "new/file.txt", "rel_inside", "a/b/../c"} {
		f.Add(p)
	}
	outsideBefore := snapshot(f, fx.outside)
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, p string) {
		res, _ := fx.b.ReadFile(ctx, builtin.ReadArgs{Path: p})
		if strings.Contains(res.Content, secretMarker) {
			t.Fatalf("ReadFile(%q) returned the secret", p)
		}
		fx.b.WriteFile(ctx, builtin.WriteArgs{Path: p, Content: "fuzz", Overwrite: true})
		if diff := cmp.Diff(outsideBefore, snapshot(t, fx.outside)); diff != "" {
			t.Fatalf("WriteFile(%q) changed the outside folder (-before +after):\n%s", p, diff)
		}
		ents, err := os.ReadDir(fx.base)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.Name() != "root" && e.Name() != "outside" && !strings.HasPrefix(e.Name(), "airlock.db") {
				t.Fatalf("WriteFile(%q) created %s beside the root", p, e.Name())
			}
		}
	})
}
