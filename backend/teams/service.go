package teams

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
)

// Directory says who the agents and projects are. authz.Service is one.
type Directory interface {
	Agents() ([]authz.Agent, error)
	Projects() ([]authz.Project, error)
}

var _ Directory = (*authz.Service)(nil)

// Limits on what agents write.
const (
	MaxTitle       = 200      // characters
	MaxDescription = 32 << 10 // bytes
	MaxMessage     = 16 << 10 // bytes of one chat message or notification text
	MaxBatch       = 100      // tasks in one create_tasks_batch
	// MaxDependsOn is how many tasks one task may name in depends_on: each
	// is looked up while the board is written, so a list without bound
	// held every agent's team calls (found by a red team: 200,000 entries,
	// 20 s).
	MaxDependsOn = 100
	MaxTopic     = 200 // characters
)

// Options configure a Service. Zero values are sensible.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Events receives board:changed, chat:message, chat:conversation and
	// execution:changed; nil drops them.
	Events core.EventSink
	// LogDir is where execution logs are written (the data directory's
	// logs folder).
	LogDir string
	Logger *slog.Logger
}

// Service is the team's domain logic: tasks, chat, the chat → task bridge,
// notifications and executions. It is safe for concurrent use.
type Service struct {
	st     Store
	dir    Directory
	now    func() time.Time
	events core.EventSink
	logDir string
	log    *slog.Logger

	// hinted are the agents that may have unread notifications. The
	// responder consults it before it reads the database, so that a tool
	// call of an agent with nothing waiting costs no query. It errs on the
	// side of "may have": Reload and RefreshHints rebuild it from the
	// database (a CLI in another process can notify).
	hintMu sync.Mutex
	// pins are the projects of sessions that name none (pinned): MCP
	// session → agent → project id; a session's go when it ends
	// (SessionEnded).
	pinMu   sync.Mutex
	pins    map[string]map[string]string
	npins   int
	hinted  map[string]uint64 // agent id → the generation of its hint
	hintSeq uint64
}

// New returns the service over st.
func New(st Store, dir Directory, opts Options) (*Service, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Events == nil {
		opts.Events = core.Discard
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	s := &Service{st: st, dir: dir, now: opts.Now, events: opts.Events, logDir: opts.LogDir, log: opts.Logger, hinted: map[string]uint64{}}
	if err := s.RefreshHints(); err != nil {
		return nil, err
	}
	return s, nil
}

// RefreshHints marks the agents that have unread notifications in the
// database (another process, the CLI, may have made them). It only adds:
// a hint goes when a claim finds nothing left, never here, so a
// notification made while the database was read keeps its hint.
func (s *Service) RefreshHints() error {
	ids, err := s.st.AgentsWithUnreadNotifications()
	if err != nil {
		return fmt.Errorf("read unread notifications: %w", err)
	}
	s.hintMu.Lock()
	for _, id := range ids {
		if _, ok := s.hinted[id]; !ok {
			s.hintSeq++
			s.hinted[id] = s.hintSeq
		}
	}
	s.hintMu.Unlock()
	return nil
}

// DefaultHintInterval is how often Watch looks for notifications other
// processes made.
const DefaultHintInterval = 2 * time.Second

// Watch refreshes the notification hints every interval until ctx ends, so
// that a notification another process made reaches its agent even when
// that process could not tell the running Airlock (Reload).
func (s *Service) Watch(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = DefaultHintInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := s.RefreshHints(); err != nil {
				s.log.Warn("refresh notification hints", "err", err)
			}
		}
	}
}

// Reload picks up what another process (the CLI) changed: the notification
// hints are rebuilt and the screens are told to read everything again.
func (s *Service) Reload() error {
	err := s.RefreshHints()
	s.events.Emit(EventBoardChanged, BoardChanged{TaskIDs: []string{}, Reason: "reload"})
	s.events.Emit(EventConversationChanged, ConversationChanged{Reason: "reload"})
	return err
}

func (s *Service) hint(agentID string) {
	s.hintMu.Lock()
	s.hintSeq++
	s.hinted[agentID] = s.hintSeq
	s.hintMu.Unlock()
}

func (s *Service) mayHaveNotifications(agentID string) bool {
	s.hintMu.Lock()
	defer s.hintMu.Unlock()
	_, ok := s.hinted[agentID]
	return ok
}

func newID(prefix string) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		// crypto/rand does not fail on supported platforms; ids must not
		// collide, so stop rather than go on.
		panic(fmt.Sprintf("teams: read random bytes: %v", err))
	}
	return prefix + hex.EncodeToString(b)
}

// roster is a snapshot of the agents, for hierarchy and project checks.
type roster struct {
	byID   map[string]authz.Agent
	byName map[string]authz.Agent
}

func (s *Service) roster() (roster, error) {
	agents, err := s.dir.Agents()
	if err != nil {
		return roster{}, fmt.Errorf("list agents: %w", err)
	}
	r := roster{byID: make(map[string]authz.Agent, len(agents)), byName: make(map[string]authz.Agent, len(agents))}
	for _, a := range agents {
		r.byID[a.ID] = a
		r.byName[a.Name] = a
	}
	return r, nil
}

// find returns the agent with id or name ref.
func (r roster) find(ref string) (authz.Agent, error) {
	if a, ok := r.byID[ref]; ok {
		return a, nil
	}
	if a, ok := r.byName[ref]; ok && ref != "" {
		return a, nil
	}
	return authz.Agent{}, errAgentNotFound(ref)
}

func (r roster) name(id string) string {
	if a, ok := r.byID[id]; ok {
		return a.Name
	}
	return id
}

// inProject reports whether agent a belongs to project: assigned to it, or
// the owner, who is the top of every project.
func inProject(a authz.Agent, projectID string) bool {
	return a.Kind == authz.KindOwner || slices.Contains(a.Projects, projectID)
}

// isStrictAncestor reports whether ancestor is above descendant in the
// hierarchy: its parent, its parent's parent, ... up to the owner. An
// agent is never its own ancestor; a sibling, another branch or a
// descendant is not one either.
func (r roster) isStrictAncestor(ancestorID, descendantID string) bool {
	if ancestorID == descendantID {
		return false
	}
	seen := map[string]bool{}
	cur := r.byID[descendantID].ParentID
	for cur != "" && !seen[cur] {
		if cur == ancestorID {
			return true
		}
		seen[cur] = true
		cur = r.byID[cur].ParentID
	}
	return false
}

// managesOrIs reports whether actor is agent or above it.
func (r roster) managesOrIs(actorID, agentID string) bool {
	return actorID == agentID || r.isStrictAncestor(actorID, agentID) || r.byID[actorID].Kind == authz.KindOwner
}

// project resolves the project an actor works in: the session's own, or
// the one project the agent is assigned to.
func (s *Service) project(r roster, agentID, sessionProject string) (string, error) {
	if sessionProject != "" {
		return sessionProject, nil
	}
	a, ok := r.byID[agentID]
	if !ok {
		return "", errAgentNotFound(agentID)
	}
	if len(a.Projects) == 1 {
		return a.Projects[0], nil
	}
	if len(a.Projects) == 0 {
		// Naming a project would not help: Airlock refuses a session in a
		// project the agent is not on (found by a seed audit: the hint
		// sent a new user's shared-token agent round in a circle).
		return "", core.Errorf(ECodeProjectRequired, "Agent '%s' is assigned to no project, and tasks and chat belong to one", a.Name).
			WithHint(fmt.Sprintf("the person puts agent '%s' on a project: Agents screen, Projects tab (or 'airlock agents update %s --project P'); an agent on one project works in it without naming it", a.Name, a.Name))
	}
	return "", core.Errorf(ECodeProjectRequired, "This session names no project and agent '%s' is assigned to %d projects", a.Name, len(a.Projects)).
		WithHint("authenticate with project_id, or connect with ?project=NAME")
}

// checkProject returns the project with id or name ref.
func (s *Service) checkProject(ref string) (authz.Project, error) {
	projects, err := s.dir.Projects()
	if err != nil {
		return authz.Project{}, err
	}
	for _, p := range projects {
		if p.ID == ref || p.Name == ref {
			return p, nil
		}
	}
	return authz.Project{}, core.Errorf(ECodeProjectNotFound, "Project not found: %s", ref)
}

// text checks one piece of agent-written text.
func checkText(field, v string, maxBytes int, required bool) error {
	if required && strings.TrimSpace(v) == "" {
		return core.Errorf(core.EInvalid, "%s is required", field)
	}
	if len(v) > maxBytes {
		return core.Errorf(core.ETooLarge, "%s is %d bytes; at most %d are allowed", field, len(v), maxBytes)
	}
	if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return core.Errorf(core.EInvalid, "%s must be UTF-8 text without NUL characters", field)
	}
	return nil
}

func checkLine(field, v string, maxChars int, required bool) error {
	if err := checkText(field, v, maxChars*4, required); err != nil {
		return err
	}
	if n := utf8.RuneCountInString(v); n > maxChars {
		return core.Errorf(core.ETooLarge, "%s is %d characters; at most %d are allowed", field, n, maxChars)
	}
	if strings.ContainsAny(v, "\r\n") {
		return core.Errorf(core.EInvalid, "%s must be one line", field)
	}
	return nil
}

func validStatus(st string) error {
	if slices.Contains(Statuses, st) {
		return nil
	}
	return core.Errorf(core.EInvalid, "Invalid status: %s. Valid values: %s", st, strings.Join(Statuses, ", "))
}

func validPriority(p string) error {
	if slices.Contains(Priorities, p) {
		return nil
	}
	return core.Errorf(core.EInvalid, "Invalid priority: %s. Valid values: %s", p, strings.Join(Priorities, ", "))
}

func ptrTime(t time.Time) *time.Time { return &t }
