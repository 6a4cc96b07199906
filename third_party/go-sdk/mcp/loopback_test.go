package mcp

import (
	"net"
	"net/netip"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/internal/util"
)

// localIsLoopback (Airlock patch) agrees with
// util.IsLoopback(addr.String()), which upstream called, for every address
// (found in a review: a typed nil *net.TCPAddr panicked).
func TestLocalIsLoopbackAgreesWithUpstream(t *testing.T) {
	addrs := []net.Addr{
		&net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1},
		&net.TCPAddr{IP: net.ParseIP("127.9.9.9"), Port: 1},
		&net.TCPAddr{IP: net.ParseIP("::1"), Port: 1},
		&net.TCPAddr{IP: net.ParseIP("::1"), Port: 1, Zone: "lo"},
		&net.TCPAddr{IP: net.ParseIP("::ffff:127.0.0.1"), Port: 1},
		&net.TCPAddr{IP: net.ParseIP("10.0.0.1"), Port: 1},
		&net.TCPAddr{IP: net.ParseIP("fe80::1"), Port: 1, Zone: "eth0"},
		&net.TCPAddr{IP: net.ParseIP("0.0.0.0"), Port: 1},
		&net.TCPAddr{Port: 1},
		&net.TCPAddr{IP: net.IP{127, 0, 0}, Port: 1}, // malformed length
		net.TCPAddrFromAddrPort(netip.MustParseAddrPort("[::ffff:127.0.0.1]:1")),
		&net.UnixAddr{Name: "/tmp/s", Net: "unix"},
		(*net.TCPAddr)(nil), // typed nil: String() is "<nil>"
	}
	for _, a := range addrs {
		want := util.IsLoopback(a.String())
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("localIsLoopback(%#v) panicked: %v; util.IsLoopback(%q) = %v", a, r, a.String(), want)
				}
			}()
			if got := localIsLoopback(a); got != want {
				t.Errorf("localIsLoopback(%v) = %v, util.IsLoopback(%q) = %v", a, got, a.String(), want)
			}
		}()
	}
}
