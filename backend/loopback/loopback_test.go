package loopback

import (
	"net"
	"os"
	"runtime"
	"testing"
)

// A port this user listens on passes; a remote address is not checked.
func TestCheckOwn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := CheckOwn(ln.Addr().String()); err != nil {
		t.Errorf("own listener: %v", err)
	}
	if err := CheckOwn("192.0.2.1:80"); err != nil {
		t.Errorf("remote address: %v", err)
	}
}

// Another user's listener is found: one owned by root, when this test
// runs as someone else, or this user's taken for another's (the uid
// compared is this process's).
func TestForeignListenerFound(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/net/tcp")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	if _, ok := foreignListener(port); ok {
		t.Fatalf("this process's own listener on %d was taken for another user's", port)
	}
	// Seen as another user: the same socket is foreign to uid+1.
	uid, ok := foreignListenerAs(port, os.Getuid()+1)
	if !ok || uid != os.Getuid() {
		t.Errorf("foreignListenerAs(%d, other uid) = %d, %v; want this user's uid %d", port, uid, ok, os.Getuid())
	}
}

// The kernel's answer and /proc's agree on who listens.
func TestListenerUIDsAgree(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("linux")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	got, err := listenerUIDs(port)
	if err != nil {
		t.Skipf("no sock_diag here: %v", err)
	}
	want := procListenerUIDs(port)
	if len(got) != 1 || len(want) != 1 || got[0] != want[0] || got[0] != os.Getuid() {
		t.Errorf("listeners on %d: sock_diag %v, /proc %v; want this user (%d) once", port, got, want, os.Getuid())
	}
}

func BenchmarkCheckOwn(b *testing.B) {
	for b.Loop() {
		CheckOwn("127.0.0.1:4750")
	}
}
