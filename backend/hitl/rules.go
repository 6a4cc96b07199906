package hitl

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
)

// RuleStore persists rules. Every change bumps a counter that other
// processes can poll (RulesVersion) in the same transaction.
type RuleStore interface {
	ListRules() ([]Rule, error)
	CreateRule(Rule) error
	UpdateRule(Rule) error                        // core.ENotFound for an unknown id
	DeleteRule(id string) error                   // core.ENotFound for an unknown id
	ImportRules(rules []Rule, replace bool) error // one transaction; replace deletes every other rule
	RulesVersion() (int64, error)
	// RulesFileHash and SetRulesFileHash remember the content hash of the
	// rules file Airlock last wrote or applied, across restarts.
	RulesFileHash() (string, error)
	SetRulesFileHash(hash string) error
}

// RulesFileName is the rules file Airlock mirrors and watches in its data
// directory.
const RulesFileName = "rules.json"

// RulesChanged is the payload of core.EventRulesChanged.
type RulesChanged struct {
	Version   int64  `json:"version"`
	FileError string `json:"fileError,omitempty"` // the rules file could not be applied
}

// RulesOptions configures a Rules service. Zero values are sensible.
type RulesOptions struct {
	Events core.EventSink // rules:changed events; nil discards
	// FilePath is the rules file to mirror and watch (see Watch); empty
	// means none (the CLI works without one).
	FilePath string
	// GuardFile is a rules file this service does not write but must not
	// make anyone lose: a change is refused while it holds an edit that
	// cannot be applied (the CLI's view of the data directory's file,
	// which the running Airlock rewrites after every change).
	GuardFile    string
	PollInterval time.Duration // how often Watch looks for changes by other processes; default 250ms
	Debounce     time.Duration // how long the file must be quiet before it is read; default 200ms
	Now          func() time.Time
	Logger       *slog.Logger
	// KnownServers lists the ids of the servers Airlock knows (configured
	// and built-in), so that a rule written with the name agents see
	// (server__tool) is understood, and a rule naming an unknown server is
	// flagged. Nil knows none.
	KnownServers func() []string
	// ResolveAgent turns the agent a rule is scoped to, written as its name
	// or its id, into the id calls carry; an unknown agent is an error.
	// Nil keeps what is written.
	ResolveAgent func(ref string) (id string, err error)
}

// Rules is the rules service: the CRUD the UI, the API and the CLI use. Every
// change is persisted first, then the rules are reloaded from the store,
// compiled and swapped in atomically, and the OnChange hooks run with the new
// version.
type Rules struct {
	store  RuleStore
	engine *Engine
	opts   RulesOptions

	mu        sync.Mutex // serialises changes and reloads
	dbVersion int64      // the store's RulesVersion the engine was loaded from
	fileHash  string     // hash of the rules file content we wrote or applied
	fileErr   error

	hookMu      sync.Mutex
	onChange    []func(version int64)
	onFileError []func(err error)
}

// NewRules loads the rules from st and returns the service.
func NewRules(st RuleStore, opts RulesOptions) (*Rules, error) {
	if opts.Events == nil {
		opts.Events = core.Discard
	}
	if opts.PollInterval <= 0 {
		opts.PollInterval = 250 * time.Millisecond
	}
	if opts.Debounce <= 0 {
		opts.Debounce = 200 * time.Millisecond
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	r := &Rules{store: st, engine: NewEngine(), opts: opts}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.reloadLocked(); err != nil {
		return nil, err
	}
	if err := r.storeAgentIDsLocked(); err != nil {
		return nil, err
	}
	return r, nil
}

// storeAgentIDsLocked rewrites rules stored with an agent's name (an older
// Airlock kept what was typed) to the agent's id: calls carry ids, so such
// a rule never matched.
func (r *Rules) storeAgentIDsLocked() error {
	var changed bool
	for _, rule := range r.engine.Rules() {
		id, ok := r.knownAgentID(rule.AgentID)
		if !ok || id == *rule.AgentID {
			continue
		}
		r.opts.Logger.Info("rule scoped to an agent by name now names its id", "rule", rule.ID, "agent", *rule.AgentID, "id", id)
		rule.AgentID = &id
		if err := r.store.UpdateRule(rule); err != nil {
			return fmt.Errorf("store the agent id of rule %s: %w", rule.ID, err)
		}
		changed = true
	}
	if !changed {
		return nil
	}
	return r.reloadLocked()
}

// knownAgentID is the id of the agent ref names (by name or id), when
// there is one.
func (r *Rules) knownAgentID(ref *string) (string, bool) {
	if ref == nil || strings.TrimSpace(*ref) == "" || r.opts.ResolveAgent == nil {
		return "", false
	}
	id, err := r.opts.ResolveAgent(strings.TrimSpace(*ref))
	return id, err == nil
}

// OnChange registers fn to run after every swap of the rule set (local
// changes, changes by other processes, the rules file). The gateway uses it
// to send tools/list_changed; the Broker to re-check waiting calls.
func (r *Rules) OnChange(fn func(version int64)) {
	r.hookMu.Lock()
	defer r.hookMu.Unlock()
	r.onChange = append(r.onChange, fn)
}

// OnFileError registers fn to run when applying the rules file fails (err)
// or succeeds again after a failure (nil).
func (r *Rules) OnFileError(fn func(err error)) {
	r.hookMu.Lock()
	defer r.hookMu.Unlock()
	r.onFileError = append(r.onFileError, fn)
}

// Engine returns the engine holding the compiled rules.
func (r *Rules) Engine() *Engine { return r.engine }

// Decide decides call against the rules in force.
func (r *Rules) Decide(req *core.Request) core.Verdict { return r.engine.DecideAt(req, r.opts.Now()) }

// Explain decides call and says why each rule above the one that fired did
// not match.
func (r *Rules) Explain(req *core.Request) Explanation { return r.engine.Explain(req, r.opts.Now()) }

// Shadowed lists the rules that can never fire.
func (r *Rules) Shadowed() []ShadowInfo { return r.engine.Shadowed() }

// List returns the rules in force, in evaluation order.
func (r *Rules) List() []Rule { return r.engine.Rules() }

// Version returns the version of the rule set in force.
func (r *Rules) Version() int64 { return r.engine.Version() }

// FileError returns why the rules file could not be applied, or nil.
func (r *Rules) FileError() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fileErr
}

func (r *Rules) now() time.Time { return r.opts.Now().UTC().Truncate(time.Microsecond) }

// Create validates in, stores the new rule and swaps it in.
func (r *Rules) Create(in RuleInput) (Rule, error) {
	in, _ = r.splitExposed(in)
	in, err := r.resolveAgent(in)
	if err != nil {
		return Rule{}, err
	}
	rule, err := r.ruleFromInput(in, newID(), time.Time{})
	if err != nil {
		return Rule{}, err
	}
	err = r.change(func() error { return r.store.CreateRule(rule) })
	return rule, err
}

// Update replaces every editable field of rule id with in.
func (r *Rules) Update(id string, in RuleInput) (Rule, error) {
	old, ok := r.engine.Rule(id)
	if !ok {
		// It may have been created by another process since the last poll.
		if _, err := r.Reload(); err != nil {
			return Rule{}, err
		}
		old, ok = r.engine.Rule(id)
	}
	if !ok {
		return Rule{}, core.Errorf(core.ENotFound, "rule %s not found", id)
	}
	in, _ = r.splitExposed(in)
	in, err := r.resolveAgent(in)
	if err != nil {
		return Rule{}, err
	}
	rule, err := r.ruleFromInput(in, id, old.CreatedAt)
	if err != nil {
		return Rule{}, err
	}
	err = r.change(func() error { return r.store.UpdateRule(rule) })
	return rule, err
}

// SetPriorities gives rules new priorities (by id) in one change: one
// rule-set version, all or none. Nothing else of them is checked again: a
// rule that has expired keeps its expiry (found by a new-user test:
// reordering rules one Update at a time stopped half-way at an expired
// one, "expiresAt is in the past", with the rules above it renumbered).
func (r *Rules) SetPriorities(prio map[string]int) error {
	if len(prio) == 0 {
		return nil
	}
	return r.change(func() error {
		var changed []Rule
		for _, rule := range r.engine.Rules() {
			if p, ok := prio[rule.ID]; ok && p != rule.Priority {
				rule.Priority = p
				changed = append(changed, rule)
			}
		}
		for id := range prio {
			if _, ok := r.engine.Rule(id); !ok {
				return core.Errorf(core.ENotFound, "rule %s not found", id)
			}
		}
		return r.store.ImportRules(changed, false)
	})
}

// Lint is what the rule form shows while a person writes a rule: the rule
// as it would be saved (a name written as agents see it, server__tool,
// split into its server and tool) and warnings about what looks wrong but
// is allowed. Invalid input is an error, as Create would give.
func (r *Rules) Lint(in RuleInput) (RuleInput, []string, error) {
	out, warnings := r.splitExposed(in)
	out, err := r.resolveAgent(out)
	if err != nil {
		return in, nil, err
	}
	norm, err := out.normalize()
	if err != nil {
		return in, nil, err
	}
	known := r.knownServers()
	if norm.ServerID != nil && !known[*norm.ServerID] {
		warnings = append(warnings, fmt.Sprintf("no server named %q is configured (known: %s); the rule matches once one is",
			*norm.ServerID, strings.Join(sortedKeys(known), ", ")))
	}
	if norm.ToolName != nil && strings.ContainsAny(*norm.ToolName, "*?") {
		// Tool names have no wildcards: such a rule never matches (found
		// by a new-user test: get-* saved without a word).
		warnings = append(warnings, fmt.Sprintf("the tool name %q has a wildcard, and no tool is named that: this rule never matches; put %q in the pattern field instead", *norm.ToolName, *norm.ToolName))
	}
	for _, p := range []*string{norm.ToolName, norm.ToolPattern} {
		if p == nil || !strings.Contains(*p, core.NameSeparator) {
			continue
		}
		if norm.ServerID == nil {
			warnings = append(warnings, fmt.Sprintf("%q looks like a name agents see (server%stool); a rule names the tool as its server does, with the server in its own field",
				*p, core.NameSeparator))
			continue
		}
		// Server w1 with tool everything__echo never matches (found by a
		// new-user test: saved without a word).
		if prefix, tool, _ := strings.Cut(*p, core.NameSeparator); known[prefix] {
			warnings = append(warnings, fmt.Sprintf("%q looks like the name agents see for tool %q of server %q; this rule is for server %q, whose tools it names as that server does, and may never match",
				*p, tool, prefix, *norm.ServerID))
		}
	}
	// A path compared as text does not follow links, and one with ".."
	// asks (found by a red-team review: /home/me/project/../.bashrc had the
	// prefix /home/me/project). On a rule that runs calls without asking,
	// say so and name the operator that checks folders.
	for _, c := range norm.Conditions {
		if norm.AutoApprove && (c.Op == OpPrefix || c.Op == OpGlob) && strings.HasPrefix(c.Value, "/") {
			dir := strings.TrimSuffix(strings.TrimRight(c.Value, "*"), "/")
			warnings = append(warnings, fmt.Sprintf("condition %s %s %q compares text, not folders (links are not followed, and a path with \"..\" in it asks); for a folder use %s %s %s",
				c.Path, c.Op, c.Value, c.Path, OpInside, dir))
		}
	}
	if norm.ServerID == nil && norm.ToolName == nil && norm.ToolPattern == nil && len(norm.Conditions) == 0 && norm.AgentID == nil && norm.SessionID == nil {
		verb := "asks about"
		if norm.AutoApprove {
			verb = "auto-approves"
		}
		warnings = append(warnings, fmt.Sprintf("this global rule %s every %s request no rule above it decides", verb, norm.Kind))
	}
	return out, warnings, nil
}

// at is " at line L, column C" for a decoding error of data that says
// where, "" otherwise.
func at(data []byte, err error) string {
	if pos := fsutil.JSONErrorAt(data, err); pos != "" {
		return " at " + pos
	}
	return ""
}

// resolveAgent writes the agent a rule is scoped to as the id calls carry
// (the user may give its name), and refuses an agent nobody knows: such a
// rule would never match, and the calls it was meant for would still ask.
func (r *Rules) resolveAgent(in RuleInput) (RuleInput, error) {
	if in.AgentID == nil || strings.TrimSpace(*in.AgentID) == "" || r.opts.ResolveAgent == nil {
		return in, nil
	}
	id, err := r.AgentID(*in.AgentID)
	if err != nil {
		return in, err
	}
	in.AgentID = &id
	return in, nil
}

// AgentID is the id of the agent named ref (its name or its id), as a
// rule scoped to it stores it.
func (r *Rules) AgentID(ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if r.opts.ResolveAgent == nil {
		return ref, nil
	}
	id, err := r.opts.ResolveAgent(ref)
	if err != nil {
		return "", (&core.Error{Code: core.EInvalid, Message: fmt.Sprintf("there is no agent %q", ref)}).
			WithHint("name an agent by its name or id, as the Agents screen (or 'airlock agents list') shows it")
	}
	return id, nil
}

// splitExposed turns a name written as agents see it (server__tool, for a
// known server) into the server and the tool, as rules name them.
func (r *Rules) splitExposed(in RuleInput) (RuleInput, []string) {
	known := r.knownServers()
	var notes []string
	for _, field := range []**string{&in.ToolName, &in.ToolPattern} {
		p := *field
		if p == nil {
			continue
		}
		server, name, ok := core.SplitExposed(strings.TrimSpace(*p))
		if !ok || name == "" || !known[server] || (in.ServerID != nil && strings.TrimSpace(*in.ServerID) != "" && strings.TrimSpace(*in.ServerID) != server) {
			continue
		}
		notes = append(notes, fmt.Sprintf("%q is the name agents see: saved as server %s, %s %s", *p, server, map[bool]string{true: "tool", false: "pattern"}[field == &in.ToolName], name))
		s, n := server, name
		in.ServerID, *field = &s, &n
	}
	return in, notes
}

func (r *Rules) knownServers() map[string]bool {
	out := map[string]bool{}
	if r.opts.KnownServers != nil {
		for _, id := range r.opts.KnownServers() {
			out[id] = true
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return []string{"none"}
	}
	return out
}

// Delete removes rule id.
func (r *Rules) Delete(id string) error {
	return r.change(func() error { return r.store.DeleteRule(id) })
}

func (r *Rules) ruleFromInput(in RuleInput, id string, created time.Time) (Rule, error) {
	in, err := in.normalize()
	if err != nil {
		return Rule{}, err
	}
	now := r.now()
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		return Rule{}, core.Errorf(core.EInvalid, "expiresAt %s is in the past", in.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if created.IsZero() {
		created = now
	}
	rule := in.build(id, created, now)
	if _, err := compileRule(rule); err != nil {
		return Rule{}, err
	}
	return rule, nil
}

// RulesFile is the export format.
type RulesFile struct {
	Version int    `json:"version"`
	Rules   []Rule `json:"rules"`
}

// Export returns the rules in force as a rules file (JSON).
func (r *Rules) Export() ([]byte, error) {
	return exportRules(r.engine.Rules())
}

func exportRules(rules []Rule) ([]byte, error) {
	if rules == nil {
		rules = []Rule{}
	}
	// Without HTML escaping: people read and edit the file, and a regex
	// such as ^a&b$ should not come back as ^a\u0026b$.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(RulesFile{Version: 1, Rules: rules}); err != nil {
		return nil, fmt.Errorf("export rules: %w", err)
	}
	return b.Bytes(), nil
}

// Import applies a rules file: all of it or, on any error, none of it.
// With replace every rule not in the file is deleted; without it the file's
// rules are added, and a rule whose id exists already replaces that rule.
// Rules without an id get a new one. It returns the number of rules imported.
func (r *Rules) Import(data []byte, replace bool) (int, error) {
	rules, err := r.parseRulesFile(data)
	if err != nil {
		return 0, err
	}
	err = r.change(func() error { return r.store.ImportRules(rules, replace) })
	if err != nil {
		return 0, err
	}
	return len(rules), nil
}

func (r *Rules) parseRulesFile(data []byte) ([]Rule, error) {
	var f struct {
		Version *int              `json:"version"`
		Rules   []json.RawMessage `json:"rules"`
	}
	if trimmed := bytes.TrimSpace(data); len(trimmed) > 0 && trimmed[0] == '[' {
		// A bare list of rules is what people paste; take it as version 1.
		var list []json.RawMessage
		if err := json.Unmarshal(trimmed, &list); err != nil {
			return nil, core.Errorf(core.EInvalid, "rules file is not valid JSON%s: %v", at(trimmed, err), err)
		}
		one := 1
		f.Version, f.Rules = &one, list
	} else {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&f); err != nil {
			// Where: a hand-edited file has hundreds of lines (found by a
			// new-user test; servers.json said it, rules.json did not).
			return nil, core.Errorf(core.EInvalid, `rules file is not valid%s: %v (expected {"version": 1, "rules": [...]})`, at(data, err), err)
		}
	}
	if f.Version == nil && f.Rules != nil {
		// {"rules": [...]} is what the import box shows to paste (found by
		// a new-user test: pasting it was refused); taken as version 1, as
		// a bare list is.
		one := 1
		f.Version = &one
	}
	if f.Version == nil || *f.Version != 1 {
		return nil, core.Errorf(core.EInvalid, `rules file must have "version": 1`)
	}
	now := r.now()
	seen := map[string]bool{}
	rules := make([]Rule, 0, len(f.Rules))
	for i, raw := range f.Rules {
		rule, err := decodeRule(raw, true)
		if err != nil {
			return nil, core.Errorf(core.EInvalid, "rule %d: %s", i+1, core.ErrorMessage(err))
		}
		if rule.ID == "" {
			rule.ID = newID()
		}
		// A person editing the file may write a tool as agents see it
		// (server__tool), as the CLI and the UI take it; kept whole, the
		// rule would never match.
		split, _ := r.splitExposed(RuleInput{ServerID: rule.ServerID, ToolName: rule.ToolName, ToolPattern: rule.ToolPattern})
		rule.ServerID, rule.ToolName, rule.ToolPattern = split.ServerID, split.ToolName, split.ToolPattern
		// A person editing the file may name an agent; calls carry its id.
		// An agent nobody knows is kept as written (it may have been
		// deleted): the rule matches nothing, as before.
		if id, ok := r.knownAgentID(rule.AgentID); ok {
			rule.AgentID = &id
		}
		if seen[rule.ID] {
			return nil, core.Errorf(core.EInvalid, "rule %d: duplicate id %q", i+1, rule.ID)
		}
		seen[rule.ID] = true
		if rule.CreatedAt.IsZero() {
			rule.CreatedAt = now
		}
		if rule.UpdatedAt.IsZero() {
			rule.UpdatedAt = now
		}
		c, err := compileRule(rule)
		if err != nil {
			return nil, core.Errorf(core.EInvalid, "rule %d: %s", i+1, core.ErrorMessage(err))
		}
		rules = append(rules, c.rule)
	}
	return rules, nil
}

// change runs a store mutation, then reloads, mirrors the rules into the
// rules file and notifies. A change that cannot reach the rules file is
// refused and undone: the file is what Airlock applies at the next start
// and after an edit, so a rule only in the database would be lost then,
// without a word.
func (r *Rules) change(mutate func() error) error {
	r.mu.Lock()
	if err := r.fileBlocksChangeLocked(); err != nil {
		r.mu.Unlock()
		return err
	}
	if err := r.fileWritableLocked(); err != nil {
		r.mu.Unlock()
		return err
	}
	before := r.engine.Rules()
	if err := mutate(); err != nil {
		r.mu.Unlock()
		return err
	}
	err := r.reloadLocked()
	if err == nil {
		if werr := r.writeFileLocked(); werr != nil {
			err = r.undoLocked(before, werr)
		}
	}
	// The file holds the rules in force now: an edit reported broken
	// before is gone (a change is refused while the file holds one).
	cleared := err == nil && r.fileErr != nil
	if cleared {
		r.fileErr = nil
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if cleared {
		r.fileErrorHooks(nil)
	}
	r.notify()
	return nil
}

// fileWritableLocked refuses a change the rules file could not take: the
// running Airlock's file (FilePath) or, for the CLI, the file the running
// Airlock will mirror the change into (GuardFile).
func (r *Rules) fileWritableLocked() error {
	path := r.opts.FilePath
	if path == "" {
		path = r.opts.GuardFile
	}
	if path == "" {
		return nil
	}
	if err := fsutil.CheckWritable(path); err != nil {
		return r.unwritable(err)
	}
	return nil
}

func (r *Rules) unwritable(err error) error {
	return (&core.Error{Code: core.EUnavailable,
		Message: fmt.Sprintf("the rules were not changed: %v", err)}).
		WithHint("Airlock keeps every rule in rules.json too and applies that file at start; make the data directory and the file writable, then try again")
}

// undoLocked puts the rules before a change back after the rules file
// could not take it, and says so.
func (r *Rules) undoLocked(before []Rule, werr error) error {
	if err := r.store.ImportRules(before, true); err != nil {
		return fmt.Errorf("%w (and undoing the change in the database failed: %v)", r.unwritable(werr), err)
	}
	if err := r.reloadLocked(); err != nil {
		return fmt.Errorf("%w (and reloading the rules failed: %v)", r.unwritable(werr), err)
	}
	return r.unwritable(werr)
}

// FileProblem says why the rules file (FilePath or GuardFile) holds an
// edit that is not in effect, nil when it holds none: for the CLI, which
// does not apply the file but should not list rules without a word when a
// person's edit of it is broken.
func (r *Rules) FileProblem() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	path, perr := r.fileEditProblemLocked()
	if perr == nil {
		return nil
	}
	return core.Errorf(core.EInvalid, "%s is not in effect (%s); the rules listed are the ones in force", path, core.ErrorMessage(perr))
}

// fileBlocksChangeLocked refuses a change while the rules file holds an
// edit that cannot be applied: the change would rewrite the file (Airlock
// mirrors the rules into it) and the person's edit would be lost. The
// servers file is guarded the same way.
func (r *Rules) fileBlocksChangeLocked() error {
	path, perr := r.fileEditProblemLocked()
	if perr == nil {
		return nil
	}
	return (&core.Error{Code: core.EInvalid,
		Message: fmt.Sprintf("cannot change rules while %s is invalid (%s): the change would overwrite your edit of the file", path, core.ErrorMessage(perr))}).
		WithHint("fix or remove the file first; the Rules screen shows what is wrong")
}

// fileEditProblemLocked returns the rules file's path and why it cannot be
// applied, when it holds content Airlock did not write that does not parse.
func (r *Rules) fileEditProblemLocked() (string, error) {
	path := r.opts.FilePath
	if path == "" {
		path = r.opts.GuardFile
	}
	if path == "" {
		return "", nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return "", nil // no file: nothing to lose
	}
	if h, herr := r.store.RulesFileHash(); herr == nil && hashOf(data) == h {
		return "", nil // what Airlock last wrote or applied
	}
	if _, perr := r.parseRulesFile(data); perr != nil {
		return path, perr
	}
	return "", nil
}

// reloadLocked loads the rules from the store and swaps them in. The
// version is read before the rules: a change that lands in between is in
// the rules read and merely causes one more reload later.
func (r *Rules) reloadLocked() error {
	v, err := r.store.RulesVersion()
	if err != nil {
		return fmt.Errorf("read rules version: %w", err)
	}
	rules, err := r.store.ListRules()
	if err != nil {
		return fmt.Errorf("load rules: %w", err)
	}
	if _, err := r.engine.LoadVersion(rules, v); err != nil {
		return fmt.Errorf("compile stored rules: %w", err)
	}
	r.dbVersion = v
	return nil
}

func (r *Rules) notify() {
	v := r.engine.Version()
	r.mu.Lock()
	fe := r.fileErr
	r.mu.Unlock()
	payload := RulesChanged{Version: v}
	if fe != nil {
		payload.FileError = fe.Error()
	}
	r.opts.Events.Emit(core.EventRulesChanged, payload)
	r.hookMu.Lock()
	hooks := append([]func(int64){}, r.onChange...)
	r.hookMu.Unlock()
	for _, h := range hooks {
		h(v)
	}
}

// Reload reloads the rules from the store if another process changed them
// since the last load, and reports whether it did. Watch calls it on every
// poll; tests and the CLI may call it directly.
func (r *Rules) Reload() (bool, error) {
	r.mu.Lock()
	v, err := r.store.RulesVersion()
	if err != nil || v == r.dbVersion {
		r.mu.Unlock()
		return false, err
	}
	err = r.reloadLocked()
	if err == nil {
		_ = r.writeFileLocked() // logged: the change is another process's, already made
	}
	r.mu.Unlock()
	if err != nil {
		return false, err
	}
	r.notify()
	return true, nil
}

// Watch keeps the rules current until ctx ends: it polls the store for
// changes made by other processes (the CLI writing the same database) and,
// with a FilePath, mirrors the rules into the rules file and applies edits
// of that file. Changes Airlock wrote itself are recognised by their content
// hash and ignored. An invalid file leaves the rules as they are; the error
// is available from FileError and reported to the OnFileError hooks and in
// the rules:changed event.
func (r *Rules) Watch(ctx context.Context) error {
	if r.opts.FilePath != "" {
		r.syncFileAtStart()
		stopped, err := fsutil.Watch(ctx, r.opts.FilePath, r.opts.Debounce, r.ApplyFile)
		if err != nil {
			return fmt.Errorf("watch rules file: %w", err)
		}
		defer func() { <-stopped }() // no apply of the file is left running
	}
	poll := time.NewTicker(r.opts.PollInterval)
	defer poll.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
			if _, err := r.Reload(); err != nil {
				r.opts.Logger.Warn("reload rules", "err", err)
			}
		}
	}
}

// syncFileAtStart reconciles the rules file with the store when Watch
// starts: a file edited while Airlock was not running (its hash differs
// from the one Airlock last wrote or applied) is applied; otherwise the
// store wins and the file is rewritten from it.
func (r *Rules) syncFileAtStart() {
	r.mu.Lock()
	h, err := r.store.RulesFileHash()
	if err != nil {
		r.opts.Logger.Warn("read rules file hash", "err", err)
	}
	r.fileHash = h
	data, rerr := os.ReadFile(r.opts.FilePath)
	// A file Airlock did not write is the person's, even before Airlock
	// ever wrote one (no hash stored yet): apply it, or keep it and say
	// why, never overwrite it. An empty file is nobody's edit.
	edited := rerr == nil && len(bytes.TrimSpace(data)) > 0 && hashOf(data) != h
	if !edited {
		_ = r.writeFileLocked() // logged; the rules in force are the store's
	}
	r.mu.Unlock()
	if edited {
		r.ApplyFile()
	}
}

// ApplyFile reads the rules file and, unless Airlock wrote (or already
// applied) exactly this content, replaces the rules with it. Watch calls it
// after the file has been quiet for the debounce interval.
func (r *Rules) ApplyFile() {
	if r.opts.FilePath == "" {
		return
	}
	// Read under the lock: a file read before a rule change that then
	// compared against the hash that change wrote would apply stale rules.
	r.mu.Lock()
	data, err := os.ReadFile(r.opts.FilePath)
	if errors.Is(err, fs.ErrNotExist) {
		r.mu.Unlock()
		return // a deleted file deletes no rules; the next change rewrites it
	}
	if err == nil && hashOf(data) == r.fileHash {
		// Airlock's own version of the file (an undo, a checkout): nothing
		// to apply, and a broken edit reported before is gone.
		prev := r.fileErr
		r.fileErr = nil
		r.mu.Unlock()
		if prev != nil {
			r.fileErrorHooks(nil)
			r.notify()
		}
		return
	}
	var rules []Rule
	if err == nil {
		rules, err = r.parseRulesFile(data)
	}
	if err == nil {
		err = r.store.ImportRules(rules, true)
	}
	if err == nil {
		err = r.reloadLocked()
	}
	if err == nil {
		r.fileHash = hashOf(data)
		if herr := r.store.SetRulesFileHash(r.fileHash); herr != nil {
			r.opts.Logger.Warn("store rules file hash", "err", herr)
		}
	}
	prev := r.fileErr
	if err != nil {
		r.fileErr = fmt.Errorf("rules file %s not applied, the previous rules stay in force: %w", r.opts.FilePath, err)
	} else {
		r.fileErr = nil
	}
	fileErr := r.fileErr
	r.mu.Unlock()

	if fileErr != nil || prev != nil {
		r.fileErrorHooks(fileErr)
	}
	if err != nil {
		r.opts.Logger.Warn("apply rules file", "err", fileErr)
		r.opts.Events.Emit(core.EventRulesChanged, RulesChanged{Version: r.engine.Version(), FileError: fileErr.Error()})
		return
	}
	r.notify()
}

// fileErrorHooks tells the OnFileError hooks the rules file's state (nil:
// fine again).
func (r *Rules) fileErrorHooks(err error) {
	r.hookMu.Lock()
	hooks := append([]func(error){}, r.onFileError...)
	r.hookMu.Unlock()
	for _, h := range hooks {
		h(err)
	}
}

// writeFileLocked mirrors the rules in force into the rules file, unless
// it holds exactly that already. The write is atomic (temp file + rename).
// Callers that cannot refuse (a change another process made) log the error.
func (r *Rules) writeFileLocked() error {
	if r.opts.FilePath == "" {
		return nil
	}
	data, err := exportRules(r.engine.Rules())
	if err != nil {
		return err
	}
	h := hashOf(data)
	if h == r.fileHash {
		return nil
	}
	if err := fsutil.WriteFileAtomic(r.opts.FilePath, data); err != nil {
		r.opts.Logger.Warn("write rules file", "err", err)
		return err
	}
	r.fileHash = h
	if err := r.store.SetRulesFileHash(h); err != nil {
		r.opts.Logger.Warn("store rules file hash", "err", err)
	}
	return nil
}

func hashOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
