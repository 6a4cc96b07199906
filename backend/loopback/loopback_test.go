package loopback

import (
	"net"
	"strconv"
	"testing"
)

// listen opens a loopback listener of this user's for the test and
// returns its port.
func listen(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// A port this user listens on passes; a remote address is not checked.
func TestCheckOwn(t *testing.T) {
	if err := CheckOwn(net.JoinHostPort("127.0.0.1", strconv.Itoa(listen(t)))); err != nil {
		t.Errorf("own listener: %v", err)
	}
	if err := CheckOwn("192.0.2.1:80"); err != nil {
		t.Errorf("remote address: %v", err)
	}
}

func BenchmarkCheckOwn(b *testing.B) {
	for b.Loop() {
		CheckOwn("127.0.0.1:4750")
	}
}
