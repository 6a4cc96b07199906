// Package agentscript is the scripted agent: `airlock agent-script FILE`, a
// real MCP client (the Go SDK over Streamable HTTP) that connects to Airlock
// with an agent token and performs a YAML script of steps — tool calls with
// expected outcomes, tool listings, waits for notifications, polls until a
// condition holds — printing each step and failing on the first unmet
// expectation.
//
// It is a test double for an LLM agent, used by Airlock's own tests and
// demos: it does exactly what its script says, so a run is reproducible and
// its expectations are checked, where a model would improvise. It is not an
// agent and makes no decisions.
//
// A script:
//
//	name: fix the login page
//	timeout: 5m                     # the whole script (default 10m)
//	vars: {greeting: hello}         # also --var k=v; ${task_id} etc. from the runner
//	steps:
//	  - list_tools: {present: [help], absent: [work__echo]}
//	  - call: everything__echo
//	    args: {message: "${greeting} from ${task_id}"}
//	    expect: {contains: "Echo: hello"}
//	  - call: work__echo                       # expected to be refused
//	    expect: {error: true, code: not_subscribed}
//	  - call: get_my_execution_history
//	    save: {exec: "$.executions.0.execution_id"}
//	  - poll:                                  # call until the expectation holds
//	      call: get_next_action
//	      until: {contains: report_completed}
//	      every: 200ms
//	      timeout: 30s
//	  - wait_notification: {kind: tools/list_changed, timeout: 30s}
//	  - print: "done with ${exec}"
//
// Each step does one thing: call, list_tools, poll, wait_notification or
// print. A call expects success unless its expect says error: true (or
// names a code); code is Airlock's error code (from the result's
// _meta["airlock/error"]), contains and not_contains look in the result's
// text (its text contents, else its structured content as JSON). save
// takes values from the result into variables: "text" (the whole text),
// a JSON path such as "$.a.b.0" into the structured content (or the text
// parsed as JSON), or "re:PATTERN" (the first match, or its first group).
//
// It imports core and the MCP SDK.
package agentscript

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/airlock-dev/airlock/backend/core"
)

// Script is a parsed script.
type Script struct {
	Name    string         `yaml:"name"`
	Timeout Duration       `yaml:"timeout"`
	Vars    map[string]any `yaml:"vars"`
	Steps   []Step         `yaml:"steps"`
}

// DefaultTimeout bounds a script that sets no timeout.
const DefaultTimeout = 10 * time.Minute

// Step is one step: exactly one of Call, ListTools, Poll, WaitNotification
// and Print.
type Step struct {
	// Name labels the step in the output.
	Name string `yaml:"name"`

	Call   string            `yaml:"call"`
	Args   map[string]any    `yaml:"args"`
	Expect *Expect           `yaml:"expect"`
	Save   map[string]string `yaml:"save"`
	// Timeout bounds the step (a call waiting for an approval waits up to
	// it); default: what is left of the script's.
	Timeout Duration `yaml:"timeout"`

	ListTools        *ListTools        `yaml:"list_tools"`
	Poll             *Poll             `yaml:"poll"`
	WaitNotification *WaitNotification `yaml:"wait_notification"`
	Print            string            `yaml:"print"`
}

// Expect is what a call's result must be.
type Expect struct {
	// Error expects a tool error (isError, or a protocol error); nil or
	// false expects success, unless Code is set.
	Error *bool `yaml:"error"`
	// Code is the Airlock error code the error must carry.
	Code        string     `yaml:"code"`
	Contains    StringList `yaml:"contains"`
	NotContains StringList `yaml:"not_contains"`
}

// ListTools lists the tools and checks names.
type ListTools struct {
	Present StringList `yaml:"present"`
	Absent  StringList `yaml:"absent"`
}

// Poll calls a tool until its result meets Until, or fails at Timeout.
type Poll struct {
	Call  string            `yaml:"call"`
	Args  map[string]any    `yaml:"args"`
	Until Expect            `yaml:"until"`
	Save  map[string]string `yaml:"save"`
	// Every paces the calls (default 200ms).
	Every   Duration `yaml:"every"`
	Timeout Duration `yaml:"timeout"`
}

// WaitNotification waits for a notification from Airlock.
type WaitNotification struct {
	// Kind is tools/list_changed, prompts/list_changed,
	// resources/list_changed, resources/updated, message (logging) or
	// progress.
	Kind string `yaml:"kind"`
	// Contains must be in the notification's JSON.
	Contains StringList `yaml:"contains"`
	Timeout  Duration   `yaml:"timeout"`
}

// Notification kinds a script may wait for.
var notificationKinds = []string{"tools/list_changed", "prompts/list_changed", "resources/list_changed", "resources/updated", "message", "progress"}

// Duration is a YAML duration ("30s", "5m").
type Duration time.Duration

// UnmarshalYAML reads a Go duration string.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	var s string
	if err := n.Decode(&s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a duration (e.g. 30s, 5m)", n.Line, s)
	}
	if v < 0 {
		return fmt.Errorf("line %d: a duration cannot be negative", n.Line)
	}
	*d = Duration(v)
	return nil
}

// StringList is one string or a list of strings.
type StringList []string

// UnmarshalYAML reads a scalar or a sequence.
func (l *StringList) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var s string
		if err := n.Decode(&s); err != nil {
			return err
		}
		*l = StringList{s}
		return nil
	}
	var ss []string
	if err := n.Decode(&ss); err != nil {
		return err
	}
	*l = ss
	return nil
}

// ReadFile reads and checks the script at path.
func ReadFile(path string) (*Script, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, core.Errorf(core.EInvalid, "read the script: %v", err)
	}
	return Parse(b)
}

// Parse reads and checks a script. Unknown keys are refused, so that a
// typo never silently skips an expectation.
func Parse(b []byte) (*Script, error) {
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, core.Errorf(core.EInvalid, "the script is not valid: %v", err)
	}
	if len(s.Steps) == 0 {
		return nil, core.Errorf(core.EInvalid, "the script has no steps")
	}
	for i, st := range s.Steps {
		if err := st.check(); err != nil {
			return nil, core.Errorf(core.EInvalid, "step %d: %v", i+1, err)
		}
	}
	return &s, nil
}

func (st Step) check() error {
	n := 0
	for _, set := range []bool{st.Call != "", st.ListTools != nil, st.Poll != nil, st.WaitNotification != nil, st.Print != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("a step does exactly one of call, list_tools, poll, wait_notification and print")
	}
	if st.Call == "" && (st.Args != nil || st.Expect != nil || st.Save != nil) {
		return errors.New("args, expect and save belong to a call")
	}
	if err := checkSave(st.Save); err != nil {
		return err
	}
	if p := st.Poll; p != nil {
		if p.Call == "" {
			return errors.New("poll needs a call")
		}
		if p.Timeout == 0 {
			return errors.New("poll needs a timeout (it calls until its expectation holds or the timeout)")
		}
		if err := checkSave(p.Save); err != nil {
			return err
		}
	}
	if w := st.WaitNotification; w != nil {
		ok := false
		for _, k := range notificationKinds {
			ok = ok || w.Kind == k
		}
		if !ok {
			return fmt.Errorf("wait_notification kind %q is not one of %s", w.Kind, strings.Join(notificationKinds, ", "))
		}
	}
	return nil
}

func checkSave(save map[string]string) error {
	for name, path := range save {
		if !varName.MatchString(name) {
			return fmt.Errorf("save: %q is not a variable name", name)
		}
		if re, ok := strings.CutPrefix(path, "re:"); ok {
			if _, err := regexp.Compile(re); err != nil {
				return fmt.Errorf("save %s: %v", name, err)
			}
		}
	}
	return nil
}

var varName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
