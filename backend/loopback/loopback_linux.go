package loopback

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// foreignListener returns the uid of a listening TCP socket on port whose
// owner is not this process's user, from /proc/net/tcp and tcp6.
func foreignListener(port int) (int, bool) { return foreignListenerAs(port, os.Getuid()) }

func foreignListenerAs(port, me int) (int, bool) {
	want := strings.ToUpper(strconv.FormatInt(int64(port), 16))
	for len(want) < 4 {
		want = "0" + want
	}
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
			_, p, ok := strings.Cut(fields[1], ":")
			if !ok || p != want {
				continue
			}
			if uid, err := strconv.Atoi(fields[7]); err == nil && uid != me {
				file.Close()
				return uid, true
			}
		}
		file.Close()
	}
	return 0, false
}
