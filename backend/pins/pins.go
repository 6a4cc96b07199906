// Package pins notices downstream tools whose definition changed after the
// user accepted it (a "rug pull": a server that describes a tool one way and
// later rewrites its description or schema), and tools a server adds after
// its first listing. A server's first listing is accepted as it is. A later
// difference is flagged on the Servers screen; agents keep seeing the
// accepted definition, and every call to the tool waits for a person until
// the change is accepted. A new tool is flagged and asks the same way,
// unless the server is marked to trust new tools.
//
// It imports core only; the store and the pipeline plug in where it is wired.
package pins

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/airlock-dev/airlock/backend/core"
)

// Pin is an accepted tool definition.
type Pin struct {
	ServerID   string
	ToolName   string
	Definition string // JSON of the fields that make up the definition
	AcceptedAt time.Time
	// Format says which fields Definition holds: FormatWhole, or
	// FormatBeforeMeta for a pin an earlier Airlock stored.
	Format int
}

// Formats of a pin's Definition.
const (
	// FormatBeforeMeta is a definition stored before a tool's _meta,
	// icons, execution and annotations.title were pinned: it holds its
	// title, description, schemas and annotation hints only.
	FormatBeforeMeta = 0
	// FormatWhole is a definition that holds every field of the tool a
	// server lists, but its name.
	FormatWhole = 1
)

// InstructionsPin is a server's accepted instructions (MCP's
// InitializeResult.instructions; "" for none).
type InstructionsPin struct {
	ServerID     string
	Instructions string
	AcceptedAt   time.Time
}

// Store persists pins.
type Store interface {
	All() ([]Pin, error)
	Save(Pin) error
	AllInstructions() ([]InstructionsPin, error)
	SaveInstructions(InstructionsPin) error
	DeleteInstructions(server string) error
}

type key struct{ server, tool string }

// Pins tracks accepted and current tool definitions.
type Pins struct {
	store Store
	now   func() time.Time

	mu       sync.Mutex
	accepted map[key]Pin
	current  map[key]string // the definition the server gives now
	changed  map[key]*core.ToolChange
	known    map[string]bool // servers whose first listing was seen

	// Instructions, by server: accepted, given now, and how they differ.
	instr        map[string]InstructionsPin
	instrNow     map[string]string
	instrChanged map[string]*core.InstructionsChange
}

// New loads the accepted definitions from st.
func New(st Store) (*Pins, error) {
	all, err := st.All()
	if err != nil {
		return nil, err
	}
	instr, err := st.AllInstructions()
	if err != nil {
		return nil, err
	}
	p := &Pins{store: st, now: time.Now, accepted: map[key]Pin{}, current: map[key]string{}, changed: map[key]*core.ToolChange{},
		known: map[string]bool{}, instr: map[string]InstructionsPin{}, instrNow: map[string]string{},
		instrChanged: map[string]*core.InstructionsChange{}}
	for _, pin := range all {
		p.known[pin.ServerID] = true
		if pin.ToolName != serverMarker {
			p.accepted[key{pin.ServerID, pin.ToolName}] = pin
		}
	}
	for _, pin := range instr {
		p.instr[pin.ServerID] = pin
	}
	return p, nil
}

// serverMarker is the tool name of the pin that records that a server's
// first listing was seen (and accepted).
const serverMarker = ""

// definition is what a change is judged on: every field of the tool the
// server lists, but its name. Not only what the model reads: a client
// renders the UI resource _meta names (MCP Apps' "ui/resourceUri"), shows
// the icons and the annotations' title as the tool's face, and runs the
// tool as its execution properties say; a server that changes any of them
// after the user accepted the tool is flagged like one that rewrites its
// description.
type definition struct {
	Title        string                `json:"title,omitempty"`
	Description  string                `json:"description,omitempty"`
	InputSchema  json.RawMessage       `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage       `json:"outputSchema,omitempty"`
	Annotations  *core.ToolAnnotations `json:"annotations,omitempty"`
	Meta         map[string]any        `json:"_meta,omitempty"` // encoded with sorted keys
	Icons        json.RawMessage       `json:"icons,omitempty"`
	Execution    json.RawMessage       `json:"execution,omitempty"`
}

func defOf(t core.ToolInfo) definition {
	return definition{Title: t.Title, Description: t.Description, InputSchema: canonical(t.InputSchema),
		OutputSchema: canonical(t.OutputSchema), Annotations: t.Annotations, Meta: t.Meta, Icons: canonical(t.Icons),
		Execution: canonical(t.Execution)}
}

// defBeforeMeta is t's definition as a FormatBeforeMeta pin holds it, to
// compare t with such a pin: without _meta, icons and execution, and with
// the annotations' hints only (an annotations object that had a title
// alone is an empty one).
func defBeforeMeta(t core.ToolInfo) definition {
	d := definition{Title: t.Title, Description: t.Description, InputSchema: canonical(t.InputSchema),
		OutputSchema: canonical(t.OutputSchema), Annotations: t.Annotations}
	if a := t.Annotations; a != nil && a.Title != "" {
		hints := *a
		hints.Title = ""
		d.Annotations = &hints
	}
	return d
}

// canonical re-encodes JSON with sorted keys, so that key order is no change.
func canonical(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return raw
	}
	b, _ := json.Marshal(v)
	return b
}

func encode(d definition) string {
	b, _ := json.Marshal(d)
	return string(b)
}

// Observe takes the tools a running server lists now. On the server's
// first listing every tool is accepted as it is. Later, a tool that differs
// from its accepted definition is flagged, and so is a tool seen for the
// first time — unless trustNew is set, which accepts it. It reports whether
// any flag changed.
func (p *Pins) Observe(server string, tools []core.ToolInfo, trustNew bool) (flagsChanged bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	save := func(pin Pin) {
		if serr := p.store.Save(pin); serr != nil && err == nil {
			err = serr
		}
	}
	first := !p.known[server]
	if first {
		p.known[server] = true
		save(Pin{ServerID: server, ToolName: serverMarker, AcceptedAt: p.now().UTC(), Format: FormatWhole})
	}
	for _, t := range tools {
		k := key{server, t.Name}
		def := encode(defOf(t))
		p.current[k] = def
		pin, known := p.accepted[k]
		if !known {
			if first || trustNew {
				pin = Pin{ServerID: server, ToolName: t.Name, Definition: def, AcceptedAt: p.now().UTC(), Format: FormatWhole}
				save(pin)
				p.accepted[k] = pin
				if p.changed[k] != nil {
					delete(p.changed, k)
					flagsChanged = true
				}
				continue
			}
			if c := p.changed[k]; c == nil || !c.New || c.Shown != Digest(def) {
				p.changed[k] = &core.ToolChange{New: true, Fields: []string{}, Shown: Digest(def), Since: p.now().UTC()}
				flagsChanged = true
			}
			continue
		}
		if pin.Format == FormatBeforeMeta && pin.Definition == encode(defBeforeMeta(t)) {
			// A pin an earlier Airlock stored, whose fields are unchanged,
			// is completed with the others as the server lists them now,
			// as a server's first listing is accepted: they reached agents
			// unpinned until then, and every tool that has one would
			// otherwise read as changed after an upgrade, asking at each
			// call for a change nobody made. One whose fields changed is
			// flagged with all it lacks, which accepting takes.
			pin = Pin{ServerID: server, ToolName: t.Name, Definition: def, AcceptedAt: pin.AcceptedAt, Format: FormatWhole}
			save(pin)
			p.accepted[k] = pin
		}
		if pin.Definition == def {
			if p.changed[k] != nil {
				delete(p.changed, k)
				flagsChanged = true
			}
			continue
		}
		fields := diff(pin.Definition, def)
		if c := p.changed[k]; c == nil || !equal(c.Fields, fields) || c.Shown != Digest(def) {
			since := p.now().UTC()
			if c != nil && !c.New {
				since = c.Since
			}
			p.changed[k] = &core.ToolChange{Fields: fields, Accepted: pin.Definition, Shown: Digest(def), Since: since}
			flagsChanged = true
		}
	}
	return flagsChanged, err
}

// Expose observes the tools a server lists and returns them as agents are
// to see them: a changed tool keeps its accepted definition (every field
// but its name) until the user accepts the change, so a rewritten
// description, or a _meta that names another UI, never reaches an agent
// unreviewed. Of a changed tool whose pin an earlier Airlock stored,
// agents get the fields that pin holds, and none of the others. Each tool
// carries its flag (Changed) for the Servers screen.
func (p *Pins) Expose(cfg core.ServerConfig, observed []core.ToolInfo) []core.ToolInfo {
	p.Observe(cfg.ID, observed, cfg.TrustNewTools) // a store error leaves the flags in memory; they still apply
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]core.ToolInfo, len(observed))
	for i, t := range observed {
		k := key{cfg.ID, t.Name}
		if c := p.changed[k]; c != nil {
			t.Changed = c
			if pin, ok := p.accepted[k]; ok && !c.New {
				var d definition
				if json.Unmarshal([]byte(pin.Definition), &d) == nil {
					t.Title, t.Description, t.InputSchema, t.OutputSchema, t.Annotations =
						d.Title, d.Description, d.InputSchema, d.OutputSchema, d.Annotations
					t.Meta, t.Icons, t.Execution = d.Meta, d.Icons, d.Execution
				}
			}
		}
		out[i] = t
	}
	return out
}

func diff(a, b string) []string {
	var da, db map[string]json.RawMessage
	json.Unmarshal([]byte(a), &da)
	json.Unmarshal([]byte(b), &db)
	var out []string
	for _, f := range []string{"title", "description", "inputSchema", "outputSchema", "annotations", "_meta", "icons", "execution"} {
		if string(da[f]) != string(db[f]) {
			out = append(out, f)
		}
	}
	return out
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Changed reports how tool on server differs from its accepted definition.
func (p *Pins) Changed(server, tool string) (*core.ToolChange, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.changed[key{server, tool}]
	return c, ok
}

// Annotate marks the changed tools of st, and its instructions when they
// changed.
func (p *Pins) Annotate(st core.ServerStatus) core.ServerStatus {
	p.mu.Lock()
	defer p.mu.Unlock()
	tools := make([]core.ToolInfo, len(st.Tools))
	for i, t := range st.Tools {
		t.Changed = p.changed[key{st.ID, t.Name}]
		tools[i] = t
	}
	st.Tools = tools
	if c := p.instrChanged[st.ID]; c != nil {
		cc := *c
		st.InstructionsChanged = &cc
		// What accepting takes, also while the server is not running.
		st.Instructions = p.instrNow[st.ID]
	}
	return st
}

// ExposeInstructions takes the instructions a server gives now (MCP's
// InitializeResult.instructions) and returns those agents are to get. A
// server's first instructions are accepted as they are (none too). Later
// ones that differ are flagged, and agents keep getting the accepted ones
// until the user accepts the change: like a tool's description, they go
// into the model's context, and a server that rewrites them can steer an
// agent. Whitespace around them is no change.
func (p *Pins) ExposeInstructions(server, text string) string {
	text = strings.TrimSpace(text)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.instrNow[server] = text
	pin, ok := p.instr[server]
	if !ok {
		pin = InstructionsPin{ServerID: server, Instructions: text, AcceptedAt: p.now().UTC()}
		// A store error leaves the pin in memory; it still applies.
		p.store.SaveInstructions(pin)
		p.instr[server] = pin
	}
	if pin.Instructions == text {
		delete(p.instrChanged, server)
		return text
	}
	if c := p.instrChanged[server]; c == nil || c.Given != text {
		// Since the text last changed: what the screen shows and what
		// accepting takes move together.
		p.instrChanged[server] = &core.InstructionsChange{Accepted: pin.Instructions, Given: text, Since: p.now().UTC()}
	}
	return pin.Instructions
}

// PruneInstructions forgets the instructions of every server keep does not
// name (see ForgetInstructions): at start, those removed from the servers
// file while Airlock was not running.
func (p *Pins) PruneInstructions(keep func(server string) bool) error {
	p.mu.Lock()
	var gone []string
	for id := range p.instr {
		if !keep(id) {
			gone = append(gone, id)
		}
	}
	p.mu.Unlock()
	var err error
	for _, id := range gone {
		err = errors.Join(err, p.ForgetInstructions(id))
	}
	return err
}

// ForgetInstructions drops what is known of server's instructions (it was
// removed): a server added later under its id is another server, whose
// first instructions are its own, not a change to the old one's.
func (p *Pins) ForgetInstructions(server string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.instr, server)
	delete(p.instrNow, server)
	delete(p.instrChanged, server)
	return p.store.DeleteInstructions(server)
}

// AcceptInstructions makes the instructions server gives now the accepted
// ones, if they are shown: the text the person read (whitespace around it
// aside). When the server gave other ones since, nothing is accepted and
// the error says so: accepting must never take text nobody saw.
func (p *Pins) AcceptInstructions(server, shown string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	text, ok := p.instrNow[server]
	if !ok {
		return core.Errorf(core.ENotFound, "server %q has given no instructions since Airlock started", server)
	}
	if p.instrChanged[server] == nil {
		return core.Errorf(core.EConflict, "the instructions of %s have not changed since they were accepted", server)
	}
	if strings.TrimSpace(shown) != text {
		return core.Errorf(core.EConflict, "the instructions of %s changed again since they were shown: nothing was accepted; read the new text and accept that", server)
	}
	pin := InstructionsPin{ServerID: server, Instructions: text, AcceptedAt: p.now().UTC()}
	if err := p.store.SaveInstructions(pin); err != nil {
		return err
	}
	p.instr[server] = pin
	delete(p.instrChanged, server)
	return nil
}

// Definition is the definition of t that pins compare and accept, as JSON:
// every field of it but its name. Digest of it is ToolChange.Shown while t
// is what the server lists.
func Definition(t core.ToolInfo) string { return encode(defOf(t)) }

// Digest names a definition (or instructions) as the user was shown it
// (ToolChange.Shown): accepting takes that one only.
func Digest(def string) string {
	sum := sha256.Sum256([]byte(def))
	return hex.EncodeToString(sum[:16])
}

// Accept makes the tool's current definition the accepted one, if it is
// the one shown (shown: its ToolChange.Shown). When the server lists
// another one since, nothing is accepted and the error says so: accepting
// must never take a definition nobody saw (found in a review).
func (p *Pins) Accept(server, tool, shown string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := key{server, tool}
	def, ok := p.current[k]
	if !ok {
		return core.Errorf(core.ENotFound, "server %q lists no tool %q", server, tool)
	}
	if p.changed[k] == nil {
		return core.Errorf(core.EConflict, "the definition of %s on %s has not changed and is not new", tool, server)
	}
	if shown != Digest(def) {
		return core.Errorf(core.EConflict, "the definition of %s on %s changed again since it was shown: nothing was accepted; look at it again and accept that", tool, server)
	}
	pin := Pin{ServerID: server, ToolName: tool, Definition: def, AcceptedAt: p.now().UTC(), Format: FormatWhole}
	if err := p.store.Save(pin); err != nil {
		return err
	}
	p.accepted[k] = pin
	delete(p.changed, k)
	return nil
}
