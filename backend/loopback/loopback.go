// Package loopback tells whether a port on this machine is served by this
// user: before a token goes to a loopback address, the program listening
// there must be one's own (found by a code review: after Airlock stopped,
// another user of the machine could take its port and be sent the agent
// token by the bridge).
package loopback

import (
	"fmt"
	"net"
	"strconv"
)

// CheckOwn returns an error when addr (host:port) is a loopback or
// wildcard address whose port another user's socket listens on. Where
// that cannot be told (no /proc, not Linux), it returns nil.
func CheckOwn(addr string) error {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil
	}
	port, err := strconv.Atoi(portStr)
	if err != nil {
		return nil
	}
	if uid, ok := foreignListener(port); ok {
		return fmt.Errorf("the program listening on %s belongs to another user of this machine (uid %d), not to you: refusing to send it your token", addr, uid)
	}
	return nil
}
