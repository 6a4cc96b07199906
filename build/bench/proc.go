package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat. The
// kernel fixes it at 100 for user space on every architecture Linux runs
// Airlock on; reading it through sysconf would need cgo.
const clockTicks = 100

// memKB is a process's resident memory as /proc/PID/status reports it.
type memKB struct {
	RSS  int // VmRSS: resident now
	Peak int // VmHWM: the highest VmRSS since the process started
}

// readMem reads VmRSS and VmHWM of pid.
func readMem(pid int) (memKB, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memKB{}, err
	}
	return parseStatus(data)
}

// parseStatus extracts VmRSS and VmHWM (in KiB) from /proc/PID/status.
func parseStatus(data []byte) (memKB, error) {
	var m memKB
	found := 0
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		var dst *int
		switch f[0] {
		case "VmRSS:":
			dst = &m.RSS
		case "VmHWM:":
			dst = &m.Peak
		default:
			continue
		}
		n, err := strconv.Atoi(f[1])
		if err != nil {
			return memKB{}, fmt.Errorf("bad %s line %q", f[0], line)
		}
		*dst = n
		found++
	}
	if found != 2 {
		return memKB{}, fmt.Errorf("no VmRSS/VmHWM in /proc/PID/status (a kernel thread or a zombie?)")
	}
	return m, nil
}

// procStat is what the bench needs from /proc/PID/stat.
type procStat struct {
	PPID int
	// CPUTicks is utime+stime: CPU time the process itself used, in
	// clockTicks (its children's time is not included).
	CPUTicks int64
	// ReapedTicks is cutime+cstime: the CPU time of its children that have
	// ended and that it has waited for.
	ReapedTicks int64
}

// readStat reads /proc/PID/stat.
func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(data)
}

// parseStat parses /proc/PID/stat. The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields are
// counted from the last ')'.
func parseStat(data []byte) (procStat, error) {
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("malformed /proc/PID/stat: no ')'")
	}
	// After ") ": field 3 (state) is f[0], ppid (4) is f[1], utime (14) is
	// f[11], stime (15) is f[12], cutime (16) is f[13], cstime (17) f[14].
	f := strings.Fields(string(data[i+1:]))
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("malformed /proc/PID/stat: %d fields after the name", len(f))
	}
	ppid, err1 := strconv.Atoi(f[1])
	utime, err2 := strconv.ParseInt(f[11], 10, 64)
	stime, err3 := strconv.ParseInt(f[12], 10, 64)
	cutime, err4 := strconv.ParseInt(f[13], 10, 64)
	cstime, err5 := strconv.ParseInt(f[14], 10, 64)
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return procStat{}, fmt.Errorf("malformed /proc/PID/stat: %w", err)
	}
	return procStat{PPID: ppid, CPUTicks: utime + stime, ReapedTicks: cutime + cstime}, nil
}

// descendants returns pid's children, their children and so on.
func descendants(pid int) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := readStat(p)
		if err != nil {
			continue // exited while we looked
		}
		children[st.PPID] = append(children[st.PPID], p)
	}
	var out []int
	queue := children[pid]
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		out = append(out, p)
		queue = append(queue, children[p]...)
	}
	return out, nil
}

// treeRSS returns the summed VmRSS (KiB) of pid and all its descendants: a
// gateway's downstream servers run as its children, and supergateway starts
// one per session, so the process alone understates what a gateway costs.
// Pages shared between the processes are counted once per process.
func treeRSS(pid int) (int, error) {
	own, err := readMem(pid)
	if err != nil {
		return 0, err
	}
	total := own.RSS
	kids, err := descendants(pid)
	if err != nil {
		return 0, err
	}
	for _, p := range kids {
		if m, err := readMem(p); err == nil { // a child may exit meanwhile
			total += m.RSS
		}
	}
	return total, nil
}
