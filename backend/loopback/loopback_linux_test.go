package loopback

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// Another user's listener is found: this user's own listener is foreign
// to any other uid (the uid compared is this process's), and never to
// this one.
func TestForeignListenerFound(t *testing.T) {
	port := listen(t)
	if _, ok := foreignListener(port); ok {
		t.Fatalf("this process's own listener on %d was taken for another user's", port)
	}
	uid, ok := foreignListenerAs(port, os.Getuid()+1)
	if !ok || uid != os.Getuid() {
		t.Errorf("foreignListenerAs(%d, other uid) = %d, %v; want this user's uid %d", port, uid, ok, os.Getuid())
	}
}

// The kernel's answer (sock_diag) and /proc's agree on who listens. Where
// a sandbox forbids sock_diag, the /proc answer, which is then used, must
// find the listener on its own.
func TestListenerUIDsAgree(t *testing.T) {
	port := listen(t)
	want := procListenerUIDs(port)
	if len(want) != 1 || want[0] != os.Getuid() {
		t.Fatalf("/proc's listeners on %d: %v, want this user (%d) once", port, want, os.Getuid())
	}
	got, err := listenerUIDs(port)
	if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPROTONOSUPPORT) {
		t.Logf("sock_diag is not allowed here (%v): the /proc answer above is the one used", err)
		return
	}
	if err != nil || len(got) != 1 || got[0] != want[0] {
		t.Errorf("listeners on %d: sock_diag %v (%v), /proc %v; want the same", port, got, err, want)
	}
}
