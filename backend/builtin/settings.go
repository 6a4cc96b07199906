package builtin

import (
	"fmt"
	"mime"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// Settings are the user's choices for the built-in servers. They are stored
// as one JSON value in the settings table; every field has a safe default
// (Defaults), and a field missing from the stored JSON keeps its default.
type Settings struct {
	// Roots are the folders the built-in tools may use (absolute paths).
	// Folders given with --allow-path are added at run time and never
	// stored. With no folder at all the built-in servers are off.
	Roots []string `json:"roots"`
	// Off are the built-in servers switched off (ServerFileRead, ...);
	// the others run while a folder is allowed.
	Off []string `json:"off"`
	// Deny are command rules that refuse a shell command outright (see
	// ParseRule for the syntax). A person cannot approve them.
	Deny []string `json:"deny"`
	// Ask are command rules that make a person approve the command, even
	// where a rule would auto-approve shell_exec.
	Ask []string `json:"ask"`
	// EnvAllow names the environment variables a command inherits from
	// Airlock; a trailing * matches a prefix (LC_*). Airlock's own
	// variables (AIRLOCK_*) and those that make a shell or the loader run
	// other code (BASH_ENV, LD_PRELOAD, ...) never pass.
	EnvAllow []string `json:"envAllow"`
	// ShellTimeoutSeconds is how long a command may run before its whole
	// process group is killed.
	ShellTimeoutSeconds int `json:"shellTimeoutSeconds"`
	// OutputCapBytes caps what a command's stdout and (separately) stderr
	// return; the rest is dropped and a truncation marker says how much.
	OutputCapBytes int `json:"outputCapBytes"`
	// ReadCapBytes is the largest file file_read returns.
	ReadCapBytes int64 `json:"readCapBytes"`
	// WriteCapBytes is the largest content file_write accepts.
	WriteCapBytes int64 `json:"writeCapBytes"`
	// BinaryMIMEAllow lists the MIME types (sniffed from the content, never
	// taken from the extension) of binary files file_read may return, as
	// base64. Empty: binary files are refused.
	BinaryMIMEAllow []string `json:"binaryMimeAllow"`
	// ExecutableExtensions are the file name extensions file_write refuses
	// (compared case-insensitively). Executable content (a shebang, ELF,
	// PE or Mach-O) is refused whatever the name.
	ExecutableExtensions []string `json:"executableExtensions"`
	// ListsVersion is the version of the default deny and ask lists these
	// lists have been given (see listAdditions). Settings an older Airlock
	// stored get the entries added since when they load.
	ListsVersion int `json:"listsVersion"`
}

// Limits of the numeric settings.
const (
	MinShellTimeoutSeconds = 1
	MaxShellTimeoutSeconds = 3600
	MinOutputCapBytes      = 1 << 10
	MaxOutputCapBytes      = 16 << 20
	MinFileCapBytes        = 1 << 10
	MaxFileCapBytes        = 256 << 20
	// MaxWriteCapBytes bounds file_write's content: it arrives inside one
	// request, and the gateway takes requests up to 16 MiB
	// (gateway.MaxRequestBytes), twice this for JSON escaping.
	MaxWriteCapBytes = 8 << 20
)

// Defaults returns the settings out of the box: no folder (the servers are
// off), the deny and ask lists below, a small environment, a 60 s timeout,
// 256 KiB of output per stream, 5 MiB files, no binary files.
func Defaults() Settings {
	return Settings{
		Roots:               []string{},
		Off:                 []string{},
		Deny:                defaultDeny(),
		Ask:                 defaultAsk(),
		EnvAllow:            []string{"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "LC_*", "TERM", "TZ", "TMPDIR"},
		ShellTimeoutSeconds: 60,
		OutputCapBytes:      256 << 10,
		ReadCapBytes:        5 << 20,
		WriteCapBytes:       5 << 20,
		BinaryMIMEAllow:     []string{},
		ExecutableExtensions: []string{
			".exe", ".com", ".bat", ".cmd", ".msi", ".scr", ".pif", ".cpl", ".dll",
			".so", ".dylib", ".sh", ".bash", ".zsh", ".ksh", ".csh", ".fish",
			".command", ".ps1", ".psm1", ".vbs", ".vbe", ".wsf", ".jar", ".apk",
			".appimage", ".run",
		},
		ListsVersion: ListsVersion,
	}
}

// defaultDeny is seed 004's blacklist (rm -rf, shutdown, format, ...) and
// its kin: commands that destroy a system or its disks.
func defaultDeny() []string {
	deny := []string{
		"rm {-r,-R,--recursive} {-f,--force}",
		"{shutdown,reboot,halt,poweroff}",
		"systemctl {poweroff,reboot,halt,kexec,suspend,hibernate}",
		"{init,telinit} {0,6}",
		"{mkfs,mkfs.*,mke2fs,mkswap,wipefs}",
		"dd of=/dev/*",
		"{format,format.com,diskpart}",
		"> /dev/{sd,hd,vd,xvd,nvme,mmcblk,disk,dm-,md,loop,mapper/}*",
	}
	for _, add := range listAdditions {
		deny = append(deny, add.deny...)
	}
	return deny
}

// defaultAsk is seed 004's "ask" policy (sudo, apt install, ...) plus the
// usual ways to install software, run downloaded or inline code, change the
// system, or rewrite shared history.
func defaultAsk() []string {
	ask := []string{
		"{sudo,su,doas,pkexec,runuser}",
		"{apt,apt-get,aptitude} {install,remove,purge,autoremove,upgrade,dist-upgrade,full-upgrade}",
		"dpkg {-i,--install,-r,--remove,-P,--purge}",
		"{yum,dnf,zypper} {install,remove,erase,upgrade,update}",
		"pacman {-S,-R,-U}",
		"{snap,flatpak} {install,remove,uninstall}",
		"brew {install,uninstall,reinstall,upgrade}",
		"{pip,pip3,pipx} {install,uninstall}",
		"{python,python3,python3.*} -m pip {install,uninstall}",
		"npm {install,i,add,uninstall,remove,rm} {-g,--global}",
		"{yarn,pnpm} global",
		"{gem,cargo} {install,uninstall}",
		"{curl,wget,fetch} | {sh,bash,zsh,dash,ksh,fish,python,python3,perl,ruby,node,php}",
		"git push {--force,-f,--force-with-lease,--mirror,--delete,-d,+*,:*}",
		"git -c",
		"chmod -R {777,a+rwx,o+w,a+w}",
		"chown -R",
		"kill -1",
		"{killall,pkill}",
		"find {-delete,-fprint,-fprintf,-fls}",
		"{python,python2,python3,python3.*,pypy,pypy3} -c",
		"{perl,ruby} {-e,-E}",
		"{node,nodejs,deno,bun} {-e,--eval,-p,--print}",
		"php -r",
		"osascript -e",
		"{awk,gawk,mawk,nawk} {*system*,*|*,*getline*}",
		"tar {--to-command,--checkpoint-action,--use-compress-program,-I}",
		"rsync {-e,--rsh}",
		"{crontab,at,batch}",
		"{systemctl,service,launchctl}",
		"{mount,umount}",
		"{iptables,ip6tables,nft,ufw}",
		"{useradd,userdel,usermod,passwd,chpasswd,visudo}",
		"{ssh-keygen,ssh-add}",
	}
	for _, add := range listAdditions {
		ask = append(ask, add.ask...)
	}
	return ask
}

// envNamePattern is a variable name with an optional trailing *.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*\*?$`)

// validate checks s and returns it normalised (roots cleaned, extensions and
// MIME types lower-cased, duplicates removed), or an EInvalid error naming
// the field and the entry at fault.
func (s Settings) validate() (Settings, error) {
	out := s
	out.Off = []string{}
	for _, id := range s.Off {
		if !slices.Contains(ServerIDs(), id) {
			return Settings{}, core.Errorf(core.EInvalid, "off: %q is not a built-in server (%s)", id, strings.Join(ServerIDs(), ", "))
		}
		if !slices.Contains(out.Off, id) {
			out.Off = append(out.Off, id)
		}
	}
	out.Roots = nil
	for _, r := range s.Roots {
		clean, err := checkRoot(r)
		if err != nil {
			return Settings{}, err
		}
		if !slices.Contains(out.Roots, clean) {
			out.Roots = append(out.Roots, clean)
		}
	}
	if out.Roots == nil {
		out.Roots = []string{}
	}
	for _, list := range []struct {
		name  string
		rules []string
	}{{"deny", s.Deny}, {"ask", s.Ask}} {
		for i, text := range list.rules {
			if _, err := ParseRule(text); err != nil {
				return Settings{}, core.Errorf(core.EInvalid, "%s rule %d %q: %s", list.name, i+1, text, core.ErrorMessage(err)).
					WithHint("see the rule syntax: a command name, then flags and words it must have; {a,b} for alternatives")
			}
		}
	}
	out.Deny = dedupe(s.Deny, strings.TrimSpace)
	out.Ask = dedupe(s.Ask, strings.TrimSpace)
	for _, name := range s.EnvAllow {
		switch {
		case name == "*":
			return Settings{}, core.Errorf(core.EInvalid, "envAllow: * would pass every secret in Airlock's environment to commands").
				WithHint("list the variables commands need, e.g. PATH, HOME, LC_*")
		case !envNamePattern.MatchString(name):
			return Settings{}, core.Errorf(core.EInvalid, "envAllow: %q is not a variable name (letters, digits and _, optionally ending in *)", name)
		case neverPassed(strings.TrimSuffix(name, "*")) || (strings.HasSuffix(name, "*") && strings.HasPrefix("AIRLOCK_", strings.TrimSuffix(name, "*"))):
			return Settings{}, core.Errorf(core.EInvalid, "envAllow: %s is never passed to commands (it is Airlock's own, or makes a shell or the loader run other code)", name)
		}
	}
	out.EnvAllow = dedupe(s.EnvAllow, func(s string) string { return s })
	if s.ShellTimeoutSeconds < MinShellTimeoutSeconds || s.ShellTimeoutSeconds > MaxShellTimeoutSeconds {
		return Settings{}, core.Errorf(core.EInvalid, "shellTimeoutSeconds must be between %d and %d, got %d", MinShellTimeoutSeconds, MaxShellTimeoutSeconds, s.ShellTimeoutSeconds)
	}
	if s.OutputCapBytes < MinOutputCapBytes || s.OutputCapBytes > MaxOutputCapBytes {
		return Settings{}, core.Errorf(core.EInvalid, "outputCapBytes must be between %d and %d, got %d", MinOutputCapBytes, MaxOutputCapBytes, s.OutputCapBytes)
	}
	for _, c := range []struct {
		name     string
		v, most  int64
		whyLimit string
	}{{"readCapBytes", s.ReadCapBytes, MaxFileCapBytes, ""}, {"writeCapBytes", s.WriteCapBytes, MaxWriteCapBytes, " (the content comes inside one MCP request)"}} {
		if c.v < MinFileCapBytes || c.v > c.most {
			return Settings{}, core.Errorf(core.EInvalid, "%s must be between %d and %d%s, got %d", c.name, MinFileCapBytes, c.most, c.whyLimit, c.v)
		}
	}
	out.BinaryMIMEAllow = nil
	for _, m := range s.BinaryMIMEAllow {
		mt, params, err := mime.ParseMediaType(m)
		if err != nil || len(params) > 0 || !strings.Contains(mt, "/") || strings.Contains(mt, "*") {
			return Settings{}, core.Errorf(core.EInvalid, "binaryMimeAllow: %q is not a MIME type such as image/png", m)
		}
		if !slices.Contains(out.BinaryMIMEAllow, mt) {
			out.BinaryMIMEAllow = append(out.BinaryMIMEAllow, mt)
		}
	}
	if out.BinaryMIMEAllow == nil {
		out.BinaryMIMEAllow = []string{}
	}
	out.ExecutableExtensions = nil
	for _, e := range s.ExecutableExtensions {
		e = strings.ToLower(strings.TrimSpace(e))
		if len(e) < 2 || e[0] != '.' || strings.ContainsAny(e[1:], `./\ *`) {
			return Settings{}, core.Errorf(core.EInvalid, "executableExtensions: %q is not an extension such as .exe", e)
		}
		if !slices.Contains(out.ExecutableExtensions, e) {
			out.ExecutableExtensions = append(out.ExecutableExtensions, e)
		}
	}
	if out.ExecutableExtensions == nil {
		out.ExecutableExtensions = []string{}
	}
	return out, nil
}

// Validate reports whether s can be saved: an EInvalid *core.Error naming
// the field at fault, or nil.
func (s Settings) Validate() error {
	_, err := s.validate()
	return err
}

// On reports whether the built-in server id is switched on (it still needs
// an allowed folder to run).
func (s Settings) On(id string) bool { return !slices.Contains(s.Off, id) }

// checkRoot checks a folder to allow and returns it cleaned. It must be
// absolute, and neither the file system root nor a kernel pseudo file
// system: allowing those would give agents the whole machine.
func checkRoot(dir string) (string, error) {
	switch {
	case dir == "":
		return "", core.Errorf(core.EInvalid, "no folder given")
	case strings.ContainsRune(dir, 0):
		return "", core.Errorf(core.EInvalid, "folder %q contains a NUL byte", dir)
	case !filepath.IsAbs(dir):
		return "", core.Errorf(core.EInvalid, "folder %q is not an absolute path", dir).WithHint("give the whole path from /, e.g. /home/me/project")
	}
	clean := filepath.Clean(dir)
	if clean == filepath.VolumeName(clean)+string(filepath.Separator) {
		return "", core.Errorf(core.EInvalid, "folder %s is the root of the file system; allowing it would give agents the whole machine", clean).
			WithHint("allow the project folders agents work in")
	}
	for _, pseudo := range []string{"/proc", "/sys", "/dev"} {
		if clean == pseudo || strings.HasPrefix(clean, pseudo+"/") {
			return "", core.Errorf(core.EInvalid, "folder %s is inside %s, a kernel pseudo file system whose links lead anywhere", clean, pseudo)
		}
	}
	return clean, nil
}

// neverPassedNames are environment variables that are never given to a
// command, whatever the allow list says: they make a shell or the dynamic
// loader run code other than the command.
var neverPassedNames = []string{
	"BASH_ENV", "ENV", "SHELLOPTS", "BASHOPTS", "PS4", "PROMPT_COMMAND", "IFS", "CDPATH", "GLOBIGNORE",
	"LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "LD_DEBUG_OUTPUT",
	"DYLD_INSERT_LIBRARIES", "DYLD_LIBRARY_PATH", "DYLD_FRAMEWORK_PATH",
	"PYTHONSTARTUP", "PERL5OPT", "NODE_OPTIONS", "RUBYOPT",
}

// neverPassed reports whether the variable name may never reach a command:
// Airlock's own (AIRLOCK_*), exported shell functions, and the names above.
func neverPassed(name string) bool {
	return strings.HasPrefix(name, "AIRLOCK_") || strings.HasPrefix(name, "BASH_FUNC_") || slices.Contains(neverPassedNames, name)
}

func dedupe(in []string, norm func(string) string) []string {
	out := make([]string, 0, len(in))
	for _, s := range in {
		s = norm(s)
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// describeRoots lists folders for messages.
func describeRoots(roots []string) string {
	if len(roots) == 0 {
		return "(none)"
	}
	return strings.Join(roots, ", ")
}

// String renders the settings' limits for logs.
func (s Settings) String() string {
	return fmt.Sprintf("roots=%v timeout=%ds output=%d read=%d write=%d", s.Roots, s.ShellTimeoutSeconds, s.OutputCapBytes, s.ReadCapBytes, s.WriteCapBytes)
}

// listAdditions are the default deny and ask entries each version of the
// lists added: version i+2 added listAdditions[i] (version 1 is the lists
// before versions). Settings stored before are given them when they load,
// once: an entry the person removes afterwards stays removed.
var listAdditions = []struct{ deny, ask []string }{
	{ask: []string{ // 2: programs a setting tells to run a command
		"git config {core.pager,core.sshCommand,core.sshcommand,core.editor,core.fsmonitor,core.hooksPath,core.hookspath,core.askPass,core.askpass,sequence.editor,diff.external,diff.*.textconv,diff.*.command,filter.*,alias.*,credential.helper,pager.*,gpg.program,gpg.*.program,uploadpack.packObjectsHook,include.path,includeIf.*}",
		"{vi,vim,nvim,view,ex,vimdiff,gvim} {-c,-S,--cmd,+*}",
		"man {-P,--pager,-H,--html}",
		"{ssh,scp,sftp} {ProxyCommand=*,-oProxyCommand=*,LocalCommand=*,-oLocalCommand=*,KnownHostsCommand=*,-oKnownHostsCommand=*}",
	}},
	{deny: []string{ // 3: more ways to wipe a disk or stop the machine
		"loginctl {poweroff,reboot,halt,kexec,suspend,hibernate}",
		"{blkdiscard,shred} /dev/*",
		"tee /dev/{sd,hd,vd,xvd,nvme,mmcblk,disk,dm-,md,loop,mapper/}*",
	}, ask: []string{ // 3: long spellings, and inline code in more programs
		"git --config-env",
		"chmod {-R,--recursive} {*777,*666,*o+w*,*a+w*,*=rw*,*+rwx,+w}",
		"chown --recursive",
		"rm {-r,-R,--recursive}",
		"git {ls-remote,fetch,clone,pull} {--upload-pack,-u}",
		"git push {--receive-pack,--exec}",
		"git send-pack",
		"git grep {-O,--open-files-in-pager}",
		"git rebase {-x,--exec}",
		"git bisect run",
		"git difftool {-x,--extcmd}",
		"git submodule foreach",
		"git filter-branch",
		"git config {remote.*.push,remote.*.mirror,remote.*.receivepack,remote.*.uploadpack,core.gitproxy}",
		"{python,python2,python3,python3.*} -m {timeit,trace,cProfile,profile,pdb,code}",
		"deno {eval,-e}",
		"{awk,gawk,mawk,nawk} *@*(*",
		"{lua,luajit,lua5.*} -e",
		"{Rscript,R} -e",
		"php {-R,-B,-E,-F}",
		"gdb",
		"sqlite3 {.shell*,.system*,-cmd}",
		"zip {-TT,--unzip-command}",
		"less +*",
	}},
	{ask: []string{ // 4: more settings and options that run a command
		"git config {trailer.*,merge.*.driver,difftool.*,mergetool.*,credential.*,gpg.*,core.alternateRefsCommand,core.alternaterefscommand,submodule.*,protocol.*}",
		"tar {-F,--info-script,--new-volume-script}",
		"go {-toolexec,-toolexec=*,-exec,-exec=*}",
		"sqlite3 {.sh*,.sy*,.output*|*,.once*|*,.read*|*}",
	}},
	{ask: []string{ // 5: found by a red-team test
		"git fetch-pack {--upload-pack*,--exec*}",
		"git archive {--exec*,--remote*}",
		"git config {tar.*,man.*,browser.*,web.browser,instaweb.*,sendemail.*,interactive.diffFilter,interactive.difffilter}",
		"git web--browse",
		"git remote add {--mirror,--mirror=*}",
		"git push --prune",
		"{ssh,scp,sftp} -F",
		"sftp {-D,-S}",
		"expect {-c,-f}",
		"dc",
		"sqlite3 {*edit(*,.imp*|*}",
		"zip {-TT*,--unzip-command*}",
		"{awk,gawk,mawk,nawk} {-f,--file} {-,/dev/*}",
		"perl {-M*,-m*,-d,-d:*,-0*e*,-l*e*}",
		"{python,python2,python3,python3.*,pypy,pypy3} {-mtimeit,-mtrace,-mcProfile,-mprofile,-mpdb,-mcode,-mpip}",
		"{node,nodejs} {--import*,--loader*,--experimental-loader*}",
		"npm {install,i,in,ins,inst,insta,instal,isnt,isntall,add,uninstall,un,unlink,remove,rm,r} {--location=global,--location}",
		"npm {inst,un,r,rm} {-g,--global}",
		"npm link",
		"find -fprint0",
		"kill {-01,-001,-0001,-00001}",
		"chmod {-R,--recursive} {*a+*w*,*o+*w*,*a=*w*,*o=*w*,??2,??3,??6,??7,???2,???3,???6,???7}",
	}},
}

// ListsVersion is the version of the default deny and ask lists.
var ListsVersion = len(listAdditions) + 1

// upgradeLists gives settings stored with older default lists the entries
// added since.
func upgradeLists(s Settings) Settings {
	for v := max(s.ListsVersion, 1); v < ListsVersion; v++ {
		add := listAdditions[v-1]
		for _, e := range add.deny {
			if !slices.Contains(s.Deny, e) {
				s.Deny = append(s.Deny, e)
			}
		}
		for _, e := range add.ask {
			if !slices.Contains(s.Ask, e) {
				s.Ask = append(s.Ask, e)
			}
		}
	}
	s.ListsVersion = ListsVersion
	return s
}
