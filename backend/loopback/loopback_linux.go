package loopback

import (
	"bufio"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// foreignListener returns the uid of a listening TCP socket on port whose
// owner is not this process's user.
func foreignListener(port int) (int, bool) { return foreignListenerAs(port, os.Getuid()) }

func foreignListenerAs(port, me int) (int, bool) {
	uids, err := listenerUIDs(port)
	if err != nil {
		uids = procListenerUIDs(port)
	}
	for _, uid := range uids {
		if uid != me {
			return uid, true
		}
	}
	return 0, false
}

// listenerUIDs asks the kernel (sock_diag over netlink) for the owners of
// the TCP sockets listening on port: only listening sockets are walked, so
// it costs microseconds where reading /proc/net/tcp walks every socket's
// table (milliseconds on a machine with much memory, for each connection
// the bridge opens).
func listenerUIDs(port int) ([]int, error) {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 4 /* NETLINK_SOCK_DIAG */)
	if err != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return nil, err
	}
	var uids []int
	for _, family := range []uint8{syscall.AF_INET, syscall.AF_INET6} {
		// nlmsghdr (16 bytes) + inet_diag_req_v2 (56 bytes).
		req := make([]byte, 16+56)
		binary.NativeEndian.PutUint32(req[0:], uint32(len(req)))
		binary.NativeEndian.PutUint16(req[4:], 20) // SOCK_DIAG_BY_FAMILY
		binary.NativeEndian.PutUint16(req[6:], syscall.NLM_F_REQUEST|syscall.NLM_F_DUMP)
		binary.NativeEndian.PutUint32(req[8:], 1)
		req[16] = family
		req[17] = syscall.IPPROTO_TCP
		binary.NativeEndian.PutUint32(req[20:], 1<<10) // TCP_LISTEN only
		if err := syscall.Sendto(fd, req, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
			return nil, err
		}
		buf := make([]byte, 64<<10)
	read:
		for {
			n, _, err := syscall.Recvfrom(fd, buf, 0)
			if err != nil {
				return nil, err
			}
			msgs, err := syscall.ParseNetlinkMessage(buf[:n])
			if err != nil {
				return nil, err
			}
			for _, m := range msgs {
				switch m.Header.Type {
				case syscall.NLMSG_DONE:
					break read
				case syscall.NLMSG_ERROR:
					return nil, syscall.EINVAL
				}
				// inet_diag_msg: family, state, timer, retrans (4 bytes),
				// the socket id (48: sport and dport big-endian first),
				// expires, rqueue, wqueue (12), uid, inode.
				if len(m.Data) < 72 {
					continue
				}
				if int(binary.BigEndian.Uint16(m.Data[4:])) == port {
					uids = append(uids, int(binary.NativeEndian.Uint32(m.Data[64:])))
				}
			}
		}
	}
	return uids, nil
}

// procListenerUIDs is listenerUIDs from /proc/net/tcp and tcp6, where
// sock_diag is not there.
func procListenerUIDs(port int) []int {
	want := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(want) < 4 {
		want = "0" + want
	}
	var uids []int
	for _, f := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		file, err := os.Open(f)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(file)
		sc.Scan() // the header
		for sc.Scan() {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid ...
			fields := strings.Fields(sc.Text())
			if len(fields) < 8 || fields[3] != "0A" { // 0A: LISTEN
				continue
			}
			if _, p, ok := strings.Cut(fields[1], ":"); !ok || p != want {
				continue
			}
			if uid, err := strconv.Atoi(fields[7]); err == nil {
				uids = append(uids, uid)
			}
		}
		file.Close()
	}
	return uids
}
