// Package config owns the downstream servers file, servers.json in the data
// directory, in the `mcpServers` format of Claude Desktop and Cursor.
//
// The file is the source of truth: the UI, the CLI and a text editor all
// change it, and a running Airlock watches it and applies valid edits at
// once. Nothing in an entry is lost: fields Airlock does not know are kept in
// core.ServerConfig.Extra and written back, and so are unknown top-level keys.
//
// It imports only core, the standard library and fsnotify.
package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
)

// FileName is the name of the servers file in the data directory.
const FileName = "servers.json"

// Path returns the servers file of a data directory.
func Path(dataDir string) string { return filepath.Join(dataDir, FileName) }

// State says which file the store reads and whether its last reading worked.
// It is the payload of core.EventServersChanged.
type State struct {
	Path string `json:"path"`
	// Error is why the file on disk is not in effect (bad JSON, duplicate
	// ids, an invalid entry); empty when it is. The servers in effect are
	// then the last good ones.
	Error string `json:"error,omitempty"`
	// LoadedAt is when the servers in effect were last read or written.
	LoadedAt time.Time `json:"loadedAt"`
}

// ImportResult says what an import did.
type ImportResult struct {
	Added   []string  `json:"added"`
	Skipped []Skipped `json:"skipped"`
	// Warnings are about entries added as they are but unlikely to work
	// so: a ${…} placeholder the client that wrote the file would have
	// filled in (Airlock runs the command as written).
	Warnings []string `json:"warnings,omitempty"`
}

// Skipped is an entry an import left out, and why.
type Skipped struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// Content fingerprints; a file is compared by the hash of its bytes.
const (
	hashNone    = ""         // nothing good read yet (the file was broken at start)
	hashMissing = "<absent>" // the file does not exist
)

// Store holds the servers of one servers file. Its methods are safe for
// concurrent use.
type Store struct {
	path string
	sink core.EventSink
	log  *slog.Logger // warns of an edit that is not applied; nil discards (SetLogger)

	mu      sync.Mutex
	servers map[string]core.ServerConfig
	other   map[string]json.RawMessage // unknown top-level keys, written back verbatim
	state   State
	// lastGood is the hash of the file content the servers in effect came
	// from (read or written by us). A write first checks the file still has
	// it, so that an edit the watcher has not applied yet is not overwritten.
	lastGood string
	// lastSeen is the hash of the content last read or written; the watcher
	// ignores events that leave it unchanged, which covers our own writes.
	lastSeen string
	subs     []func([]core.ServerConfig)

	// notifyMu keeps notifications in the order of the changes.
	notifyMu sync.Mutex

	// testHookReload, when set, is told the outcome of every reload the
	// watcher attempts: "unchanged", "applied" or "invalid".
	testHookReload func(outcome string)
}

// New loads the servers file at path. A missing file is an empty config (the
// file is created on the first write). A file that cannot be read or parsed
// also yields an empty config, with the reason in State().Error, so that
// Airlock starts and the user can see and fix the problem; changes are
// refused until the file is fixed, so that they cannot overwrite it.
func New(path string, sink core.EventSink) (*Store, error) {
	if path == "" {
		return nil, core.Errorf(core.EInvalid, "no servers file path given")
	}
	if sink == nil {
		sink = core.Discard
	}
	s := &Store{
		path:     path,
		sink:     sink,
		servers:  map[string]core.ServerConfig{},
		other:    map[string]json.RawMessage{},
		state:    State{Path: path},
		lastGood: hashNone,
		lastSeen: hashNone,
	}
	data, h, err := s.read()
	if err != nil {
		s.state.Error = err.Error()
		return s, nil
	}
	s.lastSeen = h
	if h == hashMissing {
		s.lastGood = h
		s.state.LoadedAt = time.Now()
		return s, nil
	}
	doc, err := parseStrict(data)
	if err != nil {
		s.state.Error = fmt.Sprintf("%s is invalid: %s", path, core.ErrorMessage(err))
		return s, nil
	}
	s.adopt(doc, h)
	return s, nil
}

// SetLogger makes the store warn on log when an edit of the file is not
// applied while Airlock runs (the console of `airlock serve`).
func (s *Store) SetLogger(log *slog.Logger) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.log = log
}

// read returns the file's bytes and their hash (hashMissing if absent).
func (s *Store) read() ([]byte, string, error) {
	data, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, hashMissing, nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read servers file: %w", err)
	}
	return data, hashOf(data), nil
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// describe turns a parse error of an edit made while Airlock runs into the
// message State().Error shows.
func describe(path string, err error) string {
	return fmt.Sprintf("%s is invalid, the last good servers stay in effect: %s", path, core.ErrorMessage(err))
}

// adopt makes doc the config in effect. s.mu must be held (or s unshared).
func (s *Store) adopt(doc document, h string) {
	s.servers = make(map[string]core.ServerConfig, len(doc.servers))
	for _, c := range doc.servers {
		s.servers[c.ID] = c
	}
	s.other = doc.other
	if s.other == nil {
		s.other = map[string]json.RawMessage{}
	}
	s.lastGood, s.lastSeen = h, h
	s.state.Error = ""
	s.state.LoadedAt = time.Now()
}

// State returns the file path and the outcome of its last reading.
func (s *Store) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// List returns the servers in effect, sorted by id.
func (s *Store) List() []core.ServerConfig {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.listLocked()
}

func (s *Store) listLocked() []core.ServerConfig {
	out := make([]core.ServerConfig, 0, len(s.servers))
	for _, id := range sortedKeys(s.servers) {
		out = append(out, clone(s.servers[id]))
	}
	return out
}

// Get returns the server with the given id, or an ENotFound error.
func (s *Store) Get(id string) (core.ServerConfig, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.servers[id]
	if !ok {
		return core.ServerConfig{}, core.Errorf(core.ENotFound, "server %q not found", id)
	}
	return clone(c), nil
}

// Subscribe registers fn to be called with the new list of servers after
// every successful change, made through the store or in the file. Calls
// happen in the order of the changes; fn must not change the store itself.
func (s *Store) Subscribe(fn func([]core.ServerConfig)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subs = append(s.subs, fn)
}

// Add adds a server; EConflict if its id is taken, EInvalid if it is not
// valid (see Validate).
func (s *Store) Add(cfg core.ServerConfig) error {
	if err := Validate(cfg); err != nil {
		return err
	}
	return s.change(func(servers map[string]core.ServerConfig) error {
		if _, ok := servers[cfg.ID]; ok {
			return core.Errorf(core.EConflict, "server %q already exists", cfg.ID).
				WithHint(fmt.Sprintf("change it with 'airlock servers update %s' (timeouts, --disabled, --no-prefix) or Edit on the Servers screen; or remove it first", cfg.ID))
		}
		servers[cfg.ID] = normalize(cfg)
		return nil
	})
}

// Update replaces the server with cfg.ID; ENotFound if there is none.
func (s *Store) Update(cfg core.ServerConfig) error {
	if err := Validate(cfg); err != nil {
		return err
	}
	return s.change(func(servers map[string]core.ServerConfig) error {
		if _, ok := servers[cfg.ID]; !ok {
			return core.Errorf(core.ENotFound, "server %q not found", cfg.ID)
		}
		servers[cfg.ID] = normalize(cfg)
		return nil
	})
}

// Remove deletes the server with the given id; ENotFound if there is none.
func (s *Store) Remove(id string) error {
	return s.change(func(servers map[string]core.ServerConfig) error {
		if _, ok := servers[id]; !ok {
			return core.Errorf(core.ENotFound, "server %q not found", id)
		}
		delete(servers, id)
		return nil
	})
}

// Import adds the servers of a Claude Desktop config, a Cursor or Claude Code
// file (`mcpServers`) or a VS Code file (`servers`). Each entry's key becomes
// the server id. Entries whose id is taken, that occur twice or that are
// invalid are skipped with a reason; the rest are added in one write. Invalid
// JSON is an EInvalid error naming the line and column.
func (s *Store) Import(data []byte) (ImportResult, error) {
	p, err := parse(data, []string{keyMCPServers, keyServers}, false)
	if err != nil {
		return ImportResult{}, err
	}
	if !p.found {
		return ImportResult{}, core.Errorf(core.EInvalid, "no %q or %q object found", keyMCPServers, keyServers).
			WithHint("import a Claude Desktop, Cursor, Claude Code or VS Code MCP config")
	}
	res := ImportResult{Added: []string{}, Skipped: []Skipped{}}
	err = s.change(func(servers map[string]core.ServerConfig) error {
		res = ImportResult{Added: []string{}, Skipped: []Skipped{}}
		for _, pr := range p.problems {
			res.Skipped = append(res.Skipped, Skipped{ID: pr.id, Reason: pr.reason})
		}
		for _, c := range p.servers {
			if _, ok := servers[c.ID]; ok {
				res.Skipped = append(res.Skipped, Skipped{ID: c.ID, Reason: "a server with this id already exists"})
				continue
			}
			servers[c.ID] = c
			res.Added = append(res.Added, c.ID)
			if ph := placeholders(c); len(ph) > 0 {
				verb := "is"
				if len(ph) > 1 {
					verb = "are"
				}
				res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %s %s not filled in by Airlock (the client that wrote the file would have); edit the server to give the value", c.ID, strings.Join(ph, ", "), verb))
			}
		}
		slices.SortFunc(res.Skipped, func(a, b Skipped) int { return cmpString(a.ID, b.ID) })
		if len(res.Added) == 0 {
			return errNoChange
		}
		return nil
	})
	if err != nil {
		return ImportResult{}, err
	}
	return res, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Export returns the servers in effect as an `mcpServers` file that Claude
// Desktop, Cursor or another Airlock can read, with every extra field kept.
func (s *Store) Export() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return encode(s.listLocked(), nil)
}

// errNoChange tells change that the mutation left everything as it was.
var errNoChange = errors.New("no change")

// change applies mutate to a copy of the servers and writes the result. It
// first rereads the file: an edit the watcher has not applied yet is adopted
// rather than overwritten, and a broken file is not overwritten at all.
func (s *Store) change(mutate func(map[string]core.ServerConfig) error) error {
	s.mu.Lock()
	locked := true
	defer func() {
		if locked {
			s.mu.Unlock()
		}
	}()

	adopted := false
	data, h, err := s.read()
	if err != nil {
		return err
	}
	if h != s.lastGood {
		doc := document{}
		if h != hashMissing {
			if doc, err = parseStrict(data); err != nil {
				s.state.Error = describe(s.path, err)
				s.lastSeen = h
				return core.Errorf(core.EInvalid, "cannot change servers while %s is invalid: %s", s.path, core.ErrorMessage(err)).
					WithHint("fix or remove the file first")
			}
		}
		s.adopt(doc, h)
		adopted = true
	}

	next := make(map[string]core.ServerConfig, len(s.servers))
	for id, c := range s.servers {
		next[id] = c
	}
	merr := mutate(next)
	if merr == nil {
		merr = s.writeLocked(next)
	}
	if merr == nil || adopted {
		locked = false
		s.notifyUnlock()
	}
	if merr == errNoChange {
		return nil
	}
	return merr
}

// writeLocked writes servers to the file and makes them the config in
// effect. s.mu must be held.
func (s *Store) writeLocked(servers map[string]core.ServerConfig) error {
	list := make([]core.ServerConfig, 0, len(servers))
	for _, c := range servers {
		list = append(list, c)
	}
	out, err := encode(list, s.other)
	if err != nil {
		return err
	}
	if err := writeAtomic(s.path, out); err != nil {
		return err
	}
	s.servers = servers
	s.lastGood, s.lastSeen = hashOf(out), hashOf(out)
	s.state.Error = ""
	s.state.LoadedAt = time.Now()
	return nil
}

// notifyUnlock tells subscribers and the event sink about the current state.
// It is called with s.mu held and releases it, so that subscribers may read
// the store, while notifyMu keeps notifications in order.
func (s *Store) notifyUnlock() {
	list, st, subs := s.listLocked(), s.state, slices.Clone(s.subs)
	s.notifyMu.Lock()
	s.mu.Unlock()
	defer s.notifyMu.Unlock()
	for _, fn := range subs {
		fn(list)
	}
	s.sink.Emit(core.EventServersChanged, st)
}

// writeAtomic replaces path with data (see fsutil.WriteFileAtomic).
func writeAtomic(path string, data []byte) error {
	if err := fsutil.WriteFileAtomic(path, data); err != nil {
		return core.DataDirError(filepath.Dir(path), "write servers file", err)
	}
	return nil
}

// normalize returns a deep copy of a valid cfg with its Extra values
// compacted, the form they have after a round trip through the file.
func normalize(cfg core.ServerConfig) core.ServerConfig {
	c := clone(cfg)
	for k, v := range c.Extra {
		var b bytes.Buffer
		if json.Compact(&b, v) == nil {
			c.Extra[k] = b.Bytes()
		}
	}
	return c
}

// clone returns a deep copy, so that callers cannot change the store's maps.
func clone(c core.ServerConfig) core.ServerConfig {
	c.Args = slices.Clone(c.Args)
	c.Env = cloneMap(c.Env)
	c.Headers = cloneMap(c.Headers)
	if c.Extra != nil {
		e := make(map[string]json.RawMessage, len(c.Extra))
		for k, v := range c.Extra {
			e[k] = bytes.Clone(v)
		}
		c.Extra = e
	}
	return c
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// placeholderPattern is a ${…} placeholder of VS Code (${workspaceFolder},
// ${input:key}, ${env:NAME}), Cursor and Claude Code (${NAME:-default}).
var placeholderPattern = regexp.MustCompile(`\$\{[^}]*\}`)

// placeholders lists the ${…} placeholders in a server entry, each once.
func placeholders(c core.ServerConfig) []string {
	var texts []string
	texts = append(texts, c.Command, c.URL)
	texts = append(texts, c.Args...)
	for _, v := range c.Env {
		texts = append(texts, v)
	}
	for _, v := range c.Headers {
		texts = append(texts, v)
	}
	var out []string
	for _, t := range texts {
		for _, m := range placeholderPattern.FindAllString(t, -1) {
			if !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out
}
