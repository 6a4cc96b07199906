package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Sandbox hides folders from the commands started on a thread it
// restricted.
type Sandbox struct {
	hidden []string
	abi    int
	reason string
}

// New probes the kernel and returns the sandbox hiding the folders hidden.
func New(hidden []string) *Sandbox {
	s := &Sandbox{hidden: realPaths(hidden)}
	v, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	switch {
	case e == unix.ENOSYS:
		s.reason = "this kernel has no Landlock (Linux 5.13 or later has it)"
	case e == unix.EOPNOTSUPP:
		s.reason = "Landlock is off in this kernel (add landlock to its lsm= boot parameter)"
	case e != 0:
		s.reason = fmt.Sprintf("Landlock cannot be used here: %v", e)
	default:
		s.abi = int(v)
	}
	return s
}

// Status says whether the kernel enforces the sandbox.
func (s *Sandbox) Status() Status {
	if s.abi == 0 {
		return Status{Reason: s.reason, Hidden: s.hidden}
	}
	return Status{Enforced: true, Mechanism: fmt.Sprintf("Landlock ABI %d", s.abi), Hidden: s.hidden}
}

// Restrict puts the calling thread, and so every process it starts from
// now on, in a Landlock domain where the hidden folders cannot be read,
// written, listed into or executed from. It is meant for proc.Spec's
// Restrict, which calls it on a thread that is thrown away afterwards; on
// any other thread it would restrict Airlock itself. Without Landlock it
// does nothing; with it, any failure is returned, and the command must not
// start.
func (s *Sandbox) Restrict() error {
	if s.abi == 0 || len(s.hidden) == 0 {
		return nil
	}
	all, file := rights(s.abi)
	attr := unix.LandlockRulesetAttr{Access_fs: all}
	if s.abi >= 6 {
		// A command may signal, and connect to an abstract socket of, only
		// the processes it started: not Airlock (kill -STOP would hold every
		// agent's calls), not its servers, not a daemon of the user's.
		attr.Scoped = unix.LANDLOCK_SCOPE_SIGNAL | unix.LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
	}
	fd, _, e := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return fmt.Errorf("sandbox: create the Landlock rule set: %w", e)
	}
	rs := int(fd)
	defer unix.Close(rs)
	// Listing stays allowed everywhere: a folder on a hidden folder's path
	// shows its entries' names, the hidden folder's among them.
	if err := allowPath(rs, "/", unix.LANDLOCK_ACCESS_FS_READ_DIR); err != nil {
		return err
	}
	for _, dir := range PathFolders(s.hidden) {
		if err := allowBeside(rs, dir, s.hidden, all, file); err != nil {
			return err
		}
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("sandbox: no_new_privs: %w", err)
	}
	if _, _, e := unix.Syscall(unix.SYS_LANDLOCK_RESTRICT_SELF, fd, 0, 0); e != 0 {
		return fmt.Errorf("sandbox: enter the Landlock domain: %w", e)
	}
	return nil
}

// rights returns the file system rights restricted, and those that apply
// to a file that is no folder. Every right the kernel's Landlock ABI knows
// is restricted but one: making a folder. Tools make their folders directly
// in the home folder the first time they run (npm's ~/.npm, pip's
// ~/.local, Go's ~/go), and the home folder is on the data directory's
// path, where nothing else can be made; a folder made inside the data
// directory is harmless, since nothing can be put in it or taken out.
func rights(abi int) (all, file uint64) {
	all = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE |
		unix.LANDLOCK_ACCESS_FS_READ_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_DIR | unix.LANDLOCK_ACCESS_FS_REMOVE_FILE |
		unix.LANDLOCK_ACCESS_FS_MAKE_CHAR | unix.LANDLOCK_ACCESS_FS_MAKE_REG |
		unix.LANDLOCK_ACCESS_FS_MAKE_SOCK | unix.LANDLOCK_ACCESS_FS_MAKE_FIFO | unix.LANDLOCK_ACCESS_FS_MAKE_BLOCK |
		unix.LANDLOCK_ACCESS_FS_MAKE_SYM
	file = unix.LANDLOCK_ACCESS_FS_EXECUTE | unix.LANDLOCK_ACCESS_FS_WRITE_FILE | unix.LANDLOCK_ACCESS_FS_READ_FILE
	if abi >= 2 {
		all |= unix.LANDLOCK_ACCESS_FS_REFER
	}
	if abi >= 3 {
		all |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
		file |= unix.LANDLOCK_ACCESS_FS_TRUNCATE
	}
	if abi >= 5 {
		all |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
		file |= unix.LANDLOCK_ACCESS_FS_IOCTL_DEV
	}
	return all, file
}

// onPath reports whether p is a hidden folder, inside one, or a folder on
// the path to one.
func onPath(p string, hidden []string) bool {
	for _, h := range hidden {
		if p == h || strings.HasPrefix(p, h+"/") || strings.HasPrefix(h, p+"/") {
			return true
		}
	}
	return false
}

// allowBeside allows everything beneath each entry of dir that is not on a
// hidden folder's path. Symbolic links get no rule: what they point to is
// judged where it is. A folder that cannot be listed allows nothing, which
// keeps its entries out of reach too.
func allowBeside(rs int, dir string, hidden []string, all, file uint64) error {
	dfd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	f := os.NewFile(uintptr(dfd), dir)
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil && len(entries) == 0 {
		return nil
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if onPath(p, hidden) || e.Type()&os.ModeSymlink != 0 {
			continue
		}
		fd, err := unix.Openat(dfd, e.Name(), unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // gone meanwhile: nothing to allow
		}
		var st unix.Stat_t
		access := file
		if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK {
			unix.Close(fd)
			continue
		} else if st.Mode&unix.S_IFMT == unix.S_IFDIR {
			access = all
		}
		err = addRule(rs, fd, access)
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("sandbox: allow %s: %w", p, err)
		}
	}
	return nil
}

// allowPath allows access beneath path.
func allowPath(rs int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sandbox: open %s: %w", path, err)
	}
	defer unix.Close(fd)
	if err := addRule(rs, fd, access); err != nil {
		return fmt.Errorf("sandbox: allow %s: %w", path, err)
	}
	return nil
}

func addRule(rs, fd int, access uint64) error {
	attr := unix.LandlockPathBeneathAttr{Allowed_access: access, Parent_fd: int32(fd)}
	_, _, e := unix.Syscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(rs), unix.LANDLOCK_RULE_PATH_BENEATH, uintptr(unsafe.Pointer(&attr)), 0, 0, 0)
	if e != 0 {
		return e
	}
	return nil
}
