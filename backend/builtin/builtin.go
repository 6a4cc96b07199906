// Package builtin provides Airlock's built-in MCP servers of seed 004 —
// file-read (file_read), file-write (file_write) and shell-exec
// (shell_exec) — and the policy that guards them.
//
// The servers are ordinary in-process MCP servers (Servers), so the gateway
// serves them through the same pipeline as any downstream server; Check is
// the pipeline's policy stage for them: it refuses what the settings forbid
// (a path outside the allowed folders, a deny-listed command) and demands a
// person for risky commands (the ask list, anything it cannot prove), with
// a reason code and a hint. The handlers check everything again when they
// run, through an os.Root handle, so nothing changes between check and use.
//
// Settings live in the settings table (SettingsKey) and apply to the very
// next call. With no allowed folder the servers are off.
//
// It imports core, pipeline (for the policy interface and tool errors), proc,
// the MCP SDK and mvdan.cc/sh (the shell parser).
package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/pipeline"
	"github.com/airlock-dev/airlock/backend/sandbox"
)

// Server ids and tool names (seed 004).
const (
	ServerFileRead  = "file-read"
	ServerFileWrite = "file-write"
	ServerShellExec = "shell-exec"

	ToolFileRead  = "file_read"
	ToolFileWrite = "file_write"
	ToolShellExec = "shell_exec"
)

// ServerIDs lists the built-in servers' ids.
func ServerIDs() []string { return []string{ServerFileRead, ServerFileWrite, ServerShellExec} }

// SettingsKey is the settings-table key of the stored Settings (JSON).
const SettingsKey = "builtin.settings"

// SettingsStore is where settings persist; *store.DB implements it.
type SettingsStore interface {
	Setting(key string) (string, bool, error)
	SetSetting(key, value string) error
}

// Options are a Builtin's dependencies.
type Options struct {
	// Store persists the settings. Nil keeps them in memory (tests).
	Store SettingsStore
	// Roots are folders allowed on the command line (--allow-path): used
	// with the stored ones, never stored. Relative paths are made absolute
	// against the working directory.
	Roots []string
	// Environ returns Airlock's environment, which commands inherit through
	// the allow list; nil means os.Environ.
	Environ func() []string
	// Shell runs shell_exec commands; empty means bash from PATH, else
	// /bin/sh.
	Shell string
	// DataDir is Airlock's data directory: the file tools never read or
	// write in it, and it cannot be an allowed folder.
	DataDir string
	// OnChange is called after the settings changed (an update or a reload
	// of a change made by another process), e.g. to emit a UI event.
	OnChange func(Overview)
	Logger   *slog.Logger
}

// Builtin is the built-in servers, their settings and their policy.
type Builtin struct {
	opts      Options
	protected []string // the data directory (protectedDirs)
	sandbox   *sandbox.Sandbox
	cmdRoots  []string
	shell     string
	servers   map[string]*mcp.Server

	mu      sync.Mutex // serialises changes
	lastRaw string     // the stored JSON last loaded or written
	badRaw  string     // stored JSON last refused by Reload
	cur     atomic.Pointer[config]
}

// config is one immutable version of the effective settings; handlers load
// it once per call, so a change applies to the very next call.
type config struct {
	settings   Settings
	roots      []rootDir
	protected  []string // the data directory, as given and with links resolved
	classifier *Classifier
	loadErr    string
}

// Overview is what the settings page shows: the stored settings, the
// folders in effect (stored and command-line), whether the servers are on,
// and the defaults to reset to.
type Overview struct {
	Settings Settings     `json:"settings"`
	Roots    []RootStatus `json:"roots"`
	Enabled  bool         `json:"enabled"`
	Defaults Settings     `json:"defaults"`
	// Error says why the stored settings could not be loaded (the defaults
	// without stored folders apply meanwhile).
	Error string `json:"error,omitempty"`
	// Sandbox says whether the kernel keeps shell_exec's commands out of
	// Airlock's data directory.
	Sandbox sandbox.Status `json:"sandbox"`
}

// RootStatus is one allowed folder in effect.
type RootStatus struct {
	Path      string `json:"path"`
	Source    string `json:"source"` // SourceSettings or SourceCommandLine
	Available bool   `json:"available"`
	Error     string `json:"error,omitempty"`
}

var _ pipeline.Policy = (*Builtin)(nil)

// New loads the stored settings and builds the servers. It fails when a
// command-line folder is not a folder: a typo in --allow-path should stop
// Airlock, not silently leave the tools off.
func New(o Options) (*Builtin, error) {
	if o.Environ == nil {
		o.Environ = os.Environ
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	b := &Builtin{opts: o, shell: o.Shell, protected: protectedDirs(o.DataDir)}
	b.sandbox = sandbox.New(b.protected)
	if st := b.sandbox.Status(); len(st.Hidden) > 0 && !st.Enforced {
		o.Logger.Warn("shell_exec runs without a kernel sandbox; only its command-line checks keep commands out of Airlock's data directory", "reason", st.Reason)
	}
	for _, r := range o.Roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, core.Errorf(core.EInvalid, "--allow-path %s: %v", r, err)
		}
		clean, err := checkRoot(abs)
		if err != nil {
			return nil, err
		}
		if err := b.rootProtected(clean); err != nil {
			return nil, fmt.Errorf("--allow-path %s: %w", r, err)
		}
		if err := checkDir(clean); err != nil {
			return nil, fmt.Errorf("--allow-path %s: %w", r, err)
		}
		if !slices.Contains(b.cmdRoots, clean) {
			b.cmdRoots = append(b.cmdRoots, clean)
		}
	}
	if b.shell == "" {
		b.shell = "/bin/sh"
		if p, err := exec.LookPath("bash"); err == nil {
			b.shell = p
		}
	}
	raw, s, loadErr := b.loadStored()
	if loadErr != nil {
		o.Logger.Error("built-in tool settings could not be loaded; using the defaults without stored folders", "err", loadErr)
		s = Defaults()
	}
	cfg, err := b.compile(s)
	if err != nil {
		return nil, err
	}
	if loadErr != nil {
		cfg.loadErr = core.ErrorMessage(loadErr)
	}
	b.lastRaw = raw
	b.cur.Store(cfg)
	b.servers = b.newServers()
	return b, nil
}

// loadStored reads the stored settings: the defaults when nothing is
// stored, with any field the stored JSON lacks taken from the defaults.
func (b *Builtin) loadStored() (string, Settings, error) {
	if b.opts.Store == nil {
		return "", Defaults(), nil
	}
	raw, ok, err := b.opts.Store.Setting(SettingsKey)
	if err != nil {
		return "", Settings{}, err
	}
	if !ok {
		return "", Defaults(), nil
	}
	s := Defaults()
	s.ListsVersion = 1 // stored before the lists had versions
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return raw, Settings{}, core.Errorf(core.EInvalid, "stored built-in settings are not valid JSON: %v", err)
	}
	s = upgradeLists(s)
	// An older Airlock let the cap go higher, but a request that large
	// never reached file_write (the gateway refused it first).
	s.WriteCapBytes = min(s.WriteCapBytes, MaxWriteCapBytes)
	s, err = s.validate()
	if err != nil {
		return raw, Settings{}, err
	}
	return raw, s, nil
}

// compile builds the effective configuration of s (already validated).
func (b *Builtin) compile(s Settings) (*config, error) {
	cl, err := NewClassifier(s.Deny, s.Ask)
	if err != nil {
		return nil, err
	}
	cl = cl.WithProtection(selfProtection(b.protected, b.opts.Environ()))
	cfg := &config{settings: s, classifier: cl, protected: b.protected}
	seen := map[string]bool{}
	add := func(path, source string) {
		if seen[path] {
			return
		}
		seen[path] = true
		r := rootDir{path: path, source: source}
		if err := checkDir(path); err != nil {
			r.err = core.ErrorMessage(err)
		} else if real, err := filepath.EvalSymlinks(path); err != nil {
			r.err = err.Error()
		} else if err := b.rootProtected(real); err != nil {
			r.err = core.ErrorMessage(err) // a hand edit of the settings
		} else {
			r.real = real
		}
		cfg.roots = append(cfg.roots, r)
	}
	// Command-line folders come first: relative paths and the default
	// working directory are relative to the first folder, and for a
	// terminal user that is the one they just named.
	for _, p := range b.cmdRoots {
		add(p, SourceCommandLine)
	}
	for _, p := range s.Roots {
		add(p, SourceSettings)
	}
	return cfg, nil
}

// checkDir reports whether dir is an existing folder.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return core.Errorf(core.ENotFound, "folder %s does not exist", dir)
	case err != nil:
		return core.Errorf(core.EInvalid, "folder %s cannot be used: %v", dir, err)
	case !fi.IsDir():
		return core.Errorf(core.EInvalid, "%s is not a folder", dir)
	}
	return nil
}

// rootProtected refuses an allowed folder in the data directory, as given
// or with its links resolved.
func (b *Builtin) rootProtected(dir string) error {
	if err := rootProtected(dir, b.protected); err != nil {
		return err
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		return rootProtected(real, b.protected)
	}
	return nil
}

// Enabled reports whether the built-in servers are on: at least one folder
// is allowed.
func (b *Builtin) Enabled() bool { return len(b.cur.Load().roots) > 0 }

// Settings returns the stored settings in effect.
func (b *Builtin) Settings() Settings { return cloneSettings(b.cur.Load().settings) }

// Get returns the settings page's view.
func (b *Builtin) Get() Overview { return b.overview(b.cur.Load()) }

func (b *Builtin) overview(cfg *config) Overview {
	ov := Overview{Settings: cloneSettings(cfg.settings), Enabled: len(cfg.roots) > 0, Defaults: Defaults(), Error: cfg.loadErr, Roots: []RootStatus{}, Sandbox: b.sandbox.Status()}
	for _, r := range cfg.roots {
		ov.Roots = append(ov.Roots, RootStatus{Path: r.path, Source: r.source, Available: r.real != "", Error: r.err})
	}
	return ov
}

// Update validates and stores s, and applies it to the next call. Invalid
// settings are refused with an EInvalid *core.Error naming the field.
func (b *Builtin) Update(s Settings) (Overview, error) {
	return b.change(func(Settings) (Settings, error) { return s, nil })
}

// AllowPath adds an (absolute) folder to the stored allowed folders; the
// built-in servers turn on with the first one.
func (b *Builtin) AllowPath(dir string) (Overview, error) {
	clean, err := checkRoot(dir)
	if err != nil {
		return Overview{}, err
	}
	if err := checkDir(clean); err != nil {
		return Overview{}, err
	}
	if err := b.rootProtected(clean); err != nil {
		return Overview{}, err
	}
	return b.change(func(s Settings) (Settings, error) {
		if !slices.Contains(s.Roots, clean) {
			s.Roots = append(slices.Clone(s.Roots), clean)
		}
		return s, nil
	})
}

// RemovePath removes a folder from the stored allowed folders.
func (b *Builtin) RemovePath(dir string) (Overview, error) {
	clean := filepath.Clean(dir)
	return b.change(func(s Settings) (Settings, error) {
		i := slices.Index(s.Roots, clean)
		if i < 0 {
			if slices.Contains(b.cmdRoots, clean) {
				return s, core.Errorf(core.EInvalid, "%s was allowed on the command line (--allow-path), not in the settings", clean).
					WithHint("restart Airlock without --allow-path " + clean)
			}
			return s, core.Errorf(core.ENotFound, "%s is not an allowed folder", clean)
		}
		s.Roots = slices.Delete(slices.Clone(s.Roots), i, i+1)
		return s, nil
	})
}

// change applies edit to the stored settings, validates, persists and
// swaps in the result.
func (b *Builtin) change(edit func(Settings) (Settings, error)) (Overview, error) {
	b.mu.Lock()
	next, err := edit(cloneSettings(b.cur.Load().settings))
	// The lists as they are now are what the person chose: a default entry
	// they removed is not given back at the next load.
	next.ListsVersion = ListsVersion
	if err == nil {
		next, err = next.validate()
	}
	var cfg *config
	if err == nil {
		cfg, err = b.compile(next)
	}
	var raw []byte
	if err == nil {
		raw, err = json.Marshal(next)
	}
	if err == nil && b.opts.Store != nil {
		if serr := b.opts.Store.SetSetting(SettingsKey, string(raw)); serr != nil {
			err = fmt.Errorf("save built-in settings: %w", serr)
		}
	}
	if err != nil {
		b.mu.Unlock()
		return Overview{}, err
	}
	b.lastRaw = string(raw)
	b.cur.Store(cfg)
	b.mu.Unlock()
	ov := b.overview(cfg)
	if b.opts.OnChange != nil {
		b.opts.OnChange(ov)
	}
	return ov, nil
}

// Reload picks up settings another process stored (`airlock builtin ...`
// while Airlock runs) and reports whether they changed. Invalid stored
// settings are refused and the current ones stay.
func (b *Builtin) Reload() (bool, error) {
	b.mu.Lock()
	raw, s, err := b.loadStored()
	if err != nil && raw == b.badRaw {
		b.mu.Unlock()
		return false, nil // said once already
	}
	if err != nil {
		b.badRaw = raw
	}
	if err != nil || raw == b.lastRaw {
		b.mu.Unlock()
		return false, err
	}
	cfg, err := b.compile(s)
	if err != nil {
		b.mu.Unlock()
		return false, err
	}
	b.lastRaw = raw
	b.cur.Store(cfg)
	b.mu.Unlock()
	if b.opts.OnChange != nil {
		b.opts.OnChange(b.overview(cfg))
	}
	return true, nil
}

// Watch calls Reload every interval until ctx ends.
func (b *Builtin) Watch(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := b.Reload(); err != nil {
				b.opts.Logger.Warn("built-in tool settings changed on disk but cannot be used", "err", err)
			}
		}
	}
}

// Servers returns the in-process MCP servers by id (ServerFileRead, ...).
// Connect a client to one with mcp.NewInMemoryTransports.
func (b *Builtin) Servers() map[string]*mcp.Server {
	out := make(map[string]*mcp.Server, len(b.servers))
	for k, v := range b.servers {
		out[k] = v
	}
	return out
}

// ClassifyCommand says what the shell policy makes of a shell_exec call
// with the current settings (for the CLI and the settings page's test
// panel).
func (b *Builtin) ClassifyCommand(command string, args []string) (Classification, error) {
	script, err := shellScript(command, args)
	if err != nil {
		return Classification{}, err
	}
	cfg := b.cur.Load()
	cwd := "" // where a call without cwd starts: the first allowed folder
	if len(cfg.roots) > 0 {
		cwd = cfg.roots[0].real
	}
	return cfg.classifier.ClassifyAt(script, cwd), nil
}

func cloneSettings(s Settings) Settings {
	s.Roots = slices.Clone(s.Roots)
	s.Off = slices.Clone(s.Off)
	s.Deny = slices.Clone(s.Deny)
	s.Ask = slices.Clone(s.Ask)
	s.EnvAllow = slices.Clone(s.EnvAllow)
	s.BinaryMIMEAllow = slices.Clone(s.BinaryMIMEAllow)
	s.ExecutableExtensions = slices.Clone(s.ExecutableExtensions)
	return s
}
