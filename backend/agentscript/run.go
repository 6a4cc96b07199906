package agentscript

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-dev/airlock/backend/core"
)

// EExpectation is the code of a failed step: an expectation that did not
// hold, a call that did not answer in time, a notification that never came.
const EExpectation = "expectation_failed"

// Config is where and as whom a script runs.
type Config struct {
	// URL is Airlock's MCP endpoint (with ?purpose=…&project=… when
	// wanted).
	URL string
	// Token is the agent token, sent as "Authorization: Bearer".
	Token string
	// Vars are set before the script's own (the runner's task_id, ...).
	Vars map[string]string
	// Out receives one line per step.
	Out io.Writer
}

// Execute connects and performs s. It returns nil when every step passed,
// an EExpectation *core.Error at the first that did not, and another error
// when it could not connect.
func Execute(ctx context.Context, s *Script, c Config) error {
	timeout := time.Duration(s.Timeout)
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if c.Out == nil {
		c.Out = io.Discard
	}
	ex := &executor{out: c.Out, vars: map[string]any{}, notes: newNotebook()}
	for k, v := range s.Vars {
		ex.vars[k] = v
	}
	for k, v := range c.Vars {
		ex.vars[k] = v
	}
	sess, err := connect(ctx, c.URL, c.Token, ex.notes)
	if err != nil {
		return err
	}
	defer sess.Close()
	ex.sess = sess
	name := s.Name
	if name == "" {
		name = "script"
	}
	fmt.Fprintf(c.Out, "agent-script: %s: connected to %s (session %s)\n", name, redactURL(c.URL), sess.ID())
	for i, st := range s.Steps {
		label := fmt.Sprintf("[%d/%d]", i+1, len(s.Steps))
		if st.Name != "" {
			label += " " + st.Name
		}
		stepCtx, stepCancel := ctx, context.CancelFunc(func() {})
		if st.Timeout > 0 {
			stepCtx, stepCancel = context.WithTimeout(ctx, time.Duration(st.Timeout))
		}
		summary, err := ex.step(stepCtx, st)
		stepCancel()
		if err != nil {
			fmt.Fprintf(c.Out, "FAIL %s %s: %s\n", label, describe(st), core.ErrorMessage(err))
			var e *core.Error
			if errors.As(err, &e) && e.Code == EExpectation {
				return core.Errorf(EExpectation, "step %d (%s) failed: %s", i+1, describe(st), e.Message)
			}
			return core.Errorf(EExpectation, "step %d (%s) failed: %v", i+1, describe(st), err)
		}
		fmt.Fprintf(c.Out, "ok   %s %s%s\n", label, describe(st), prefix(": ", summary))
	}
	fmt.Fprintf(c.Out, "agent-script: %s: all %d steps passed\n", name, len(s.Steps))
	return nil
}

func prefix(p, s string) string {
	if s == "" {
		return ""
	}
	return p + s
}

// redactURL drops a URL's query values a user might not want printed.
func redactURL(u string) string {
	base, _, _ := strings.Cut(u, "?")
	return base
}

func describe(st Step) string {
	switch {
	case st.Call != "":
		return "call " + st.Call
	case st.ListTools != nil:
		return "list_tools"
	case st.Poll != nil:
		return "poll " + st.Poll.Call
	case st.WaitNotification != nil:
		return "wait_notification " + st.WaitNotification.Kind
	}
	return "print"
}

func failf(format string, args ...any) error { return core.Errorf(EExpectation, format, args...) }

type executor struct {
	out   io.Writer
	vars  map[string]any
	notes *notebook
	sess  *mcp.ClientSession
}

func (ex *executor) step(ctx context.Context, st Step) (string, error) {
	switch {
	case st.Call != "":
		res, err := ex.call(ctx, st.Call, st.Args)
		if err != nil {
			return "", err
		}
		if err := ex.check(st.Expect, res); err != nil {
			return "", err
		}
		if err := ex.save(st.Save, res); err != nil {
			return "", err
		}
		return res.short(), nil
	case st.ListTools != nil:
		return ex.listTools(ctx, *st.ListTools)
	case st.Poll != nil:
		return ex.poll(ctx, *st.Poll)
	case st.WaitNotification != nil:
		return ex.wait(ctx, *st.WaitNotification)
	}
	text, err := ex.subst(st.Print)
	if err != nil {
		return "", err
	}
	return text, nil
}

// result is a call's outcome as expectations see it.
type result struct {
	isError    bool
	code       string // Airlock's error code, or the JSON-RPC error code
	text       string
	structured any
}

func (r result) short() string {
	t := strings.Join(strings.Fields(r.text), " ")
	if len(t) > 160 {
		t = t[:160] + "…"
	}
	if r.isError {
		return "error " + prefix("", r.code) + prefix(": ", t)
	}
	return t
}

func (ex *executor) call(ctx context.Context, name string, args map[string]any) (result, error) {
	a, err := ex.substAny(args)
	if err != nil {
		return result{}, err
	}
	p := &mcp.CallToolParams{Name: name}
	if m, _ := a.(map[string]any); len(m) > 0 {
		p.Arguments = m
	}
	res, err := ex.sess.CallTool(ctx, p)
	if err != nil {
		if ctx.Err() != nil {
			return result{}, failf("no answer in time (%v)", ctx.Err())
		}
		var we *jsonrpc.Error
		if errors.As(err, &we) {
			return result{isError: true, code: strconv.FormatInt(we.Code, 10), text: we.Message}, nil
		}
		return result{}, fmt.Errorf("call %s: %w", name, err)
	}
	out := result{isError: res.IsError, structured: res.StructuredContent}
	var texts []string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, tc.Text)
		}
	}
	out.text = strings.Join(texts, "\n")
	if out.text == "" && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		out.text = string(b)
	}
	if e, ok := res.Meta["airlock/error"].(map[string]any); ok {
		out.code, _ = e["code"].(string)
	}
	return out, nil
}

// check returns an EExpectation error when r does not meet e (nil e:
// success expected).
func (ex *executor) check(e *Expect, r result) error {
	var want Expect
	if e != nil {
		want = *e
	}
	wantErr := (want.Error != nil && *want.Error) || want.Code != ""
	switch {
	case wantErr && !r.isError:
		return failf("expected an error, got success: %s", r.short())
	case !wantErr && r.isError:
		return failf("expected success, got %s", r.short())
	case want.Code != "" && want.Code != r.code:
		return failf("expected error code %s, got %s", want.Code, r.short())
	}
	for _, c := range want.Contains {
		s, err := ex.subst(c)
		if err != nil {
			return err
		}
		if !strings.Contains(r.text, s) {
			return failf("expected the result to contain %q, got %s", s, r.short())
		}
	}
	for _, c := range want.NotContains {
		s, err := ex.subst(c)
		if err != nil {
			return err
		}
		if strings.Contains(r.text, s) {
			return failf("expected the result not to contain %q, got %s", s, r.short())
		}
	}
	return nil
}

func (ex *executor) save(save map[string]string, r result) error {
	for name, path := range save {
		v, err := extract(r, path)
		if err != nil {
			return failf("save %s (%s): %v", name, path, err)
		}
		ex.vars[name] = v
	}
	return nil
}

// extract takes a value out of a result: "text", "re:PATTERN" or a JSON
// path ("$.a.b.0").
func extract(r result, path string) (any, error) {
	if path == "text" {
		return r.text, nil
	}
	if pat, ok := strings.CutPrefix(path, "re:"); ok {
		m := regexp.MustCompile(pat).FindStringSubmatch(r.text)
		switch {
		case m == nil:
			return nil, fmt.Errorf("no match in %q", r.short())
		case len(m) > 1:
			return m[1], nil
		}
		return m[0], nil
	}
	data := r.structured
	if data == nil {
		if err := json.Unmarshal([]byte(r.text), &data); err != nil {
			return nil, fmt.Errorf("the result is not JSON: %s", r.short())
		}
	}
	for _, seg := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(path, "$"), "."), ".") {
		if seg == "" {
			continue
		}
		switch v := data.(type) {
		case map[string]any:
			next, ok := v[seg]
			if !ok {
				return nil, fmt.Errorf("no key %q", seg)
			}
			data = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) {
				return nil, fmt.Errorf("no element %q in a list of %d", seg, len(v))
			}
			data = v[i]
		default:
			return nil, fmt.Errorf("%q: not an object or a list", seg)
		}
	}
	return data, nil
}

var varRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// subst fills ${name} in s; an unknown name is an error.
func (ex *executor) subst(s string) (string, error) {
	var missing string
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := ex.vars[name]
		if !ok {
			missing = name
			return m
		}
		if str, ok := v.(string); ok {
			return str
		}
		b, _ := json.Marshal(v)
		return string(b)
	})
	if missing != "" {
		return "", failf("the variable ${%s} is not set", missing)
	}
	return out, nil
}

// substAny fills variables in a YAML value; a string that is exactly one
// ${name} takes the variable's own value (a number stays a number).
func (ex *executor) substAny(v any) (any, error) {
	switch x := v.(type) {
	case string:
		if m := varRef.FindStringSubmatch(x); m != nil && m[0] == x {
			val, ok := ex.vars[m[1]]
			if !ok {
				return nil, failf("the variable ${%s} is not set", m[1])
			}
			return val, nil
		}
		return ex.subst(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			s, err := ex.substAny(e)
			if err != nil {
				return nil, err
			}
			out[k] = s
		}
		return out, nil
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			s, err := ex.substAny(e)
			if err != nil {
				return nil, err
			}
			out[i] = s
		}
		return out, nil
	}
	return v, nil
}

func (ex *executor) listTools(ctx context.Context, lt ListTools) (string, error) {
	var names []string
	var cursor string
	for {
		res, err := ex.sess.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			if ctx.Err() != nil {
				return "", failf("no answer in time (%v)", ctx.Err())
			}
			return "", fmt.Errorf("list tools: %w", err)
		}
		for _, t := range res.Tools {
			names = append(names, t.Name)
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	for _, n := range lt.Present {
		if !slices.Contains(names, n) {
			return "", failf("expected tool %s in the list, got %s", n, strings.Join(names, ", "))
		}
	}
	for _, n := range lt.Absent {
		if slices.Contains(names, n) {
			return "", failf("expected tool %s not to be in the list", n)
		}
	}
	return fmt.Sprintf("%d tools", len(names)), nil
}

func (ex *executor) poll(ctx context.Context, p Poll) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(p.Timeout))
	defer cancel()
	every := time.Duration(p.Every)
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	var last error
	for n := 1; ; n++ {
		res, err := ex.call(ctx, p.Call, p.Args)
		if err == nil {
			if err = ex.check(&p.Until, res); err == nil {
				if err := ex.save(p.Save, res); err != nil {
					return "", err
				}
				return fmt.Sprintf("held after %d call(s): %s", n, res.short()), nil
			}
		}
		var e *core.Error
		if !errors.As(err, &e) || e.Code != EExpectation {
			return "", err // a broken connection is not something to wait out
		}
		last = err
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", failf("did not hold within %s: %s", time.Duration(p.Timeout), core.ErrorMessage(last))
		case <-t.C:
		}
	}
}

func (ex *executor) wait(ctx context.Context, w WaitNotification) (string, error) {
	if w.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(w.Timeout))
		defer cancel()
	}
	var want []string
	for _, c := range w.Contains {
		s, err := ex.subst(c)
		if err != nil {
			return "", err
		}
		want = append(want, s)
	}
	data, err := ex.notes.take(ctx, w.Kind, want)
	if err != nil {
		return "", failf("no %s notification%s came: %v", w.Kind, prefix(" containing ", strings.Join(want, ", ")), err)
	}
	if len(data) > 160 {
		data = data[:160] + "…"
	}
	return data, nil
}

// notebook keeps every notification received, so that a wait sees one
// that arrived before the step began. Each is taken once.
type notebook struct {
	mu      sync.Mutex
	items   []noteItem
	changed chan struct{} // closed and replaced when an item arrives
}

type noteItem struct {
	kind, data string
	taken      bool
}

func newNotebook() *notebook { return &notebook{changed: make(chan struct{})} }

func (n *notebook) add(kind string, params any) {
	b, _ := json.Marshal(params)
	n.mu.Lock()
	n.items = append(n.items, noteItem{kind: kind, data: string(b)})
	close(n.changed)
	n.changed = make(chan struct{})
	n.mu.Unlock()
}

// take waits for the first untaken notification of kind holding every
// string of want.
func (n *notebook) take(ctx context.Context, kind string, want []string) (string, error) {
	for {
		n.mu.Lock()
		for i := range n.items {
			it := &n.items[i]
			if it.taken || it.kind != kind {
				continue
			}
			all := true
			for _, w := range want {
				all = all && strings.Contains(it.data, w)
			}
			if all {
				it.taken = true
				n.mu.Unlock()
				return it.data, nil
			}
		}
		ch := n.changed
		n.mu.Unlock()
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-ch:
		}
	}
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// connect opens an MCP session over Streamable HTTP, with handlers that
// record every notification.
func connect(ctx context.Context, url, token string, notes *notebook) (*mcp.ClientSession, error) {
	if url == "" {
		return nil, core.Errorf(core.EInvalid, "no Airlock URL").
			WithHint("give --url, --mcp-config FILE or $AIRLOCK_URL")
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "airlock-agent-script", Version: "1"}, &mcp.ClientOptions{
		// No roots: the script has no files to offer.
		Capabilities:             &mcp.ClientCapabilities{},
		ToolListChangedHandler:   func(_ context.Context, r *mcp.ToolListChangedRequest) { notes.add("tools/list_changed", r.Params) },
		PromptListChangedHandler: func(_ context.Context, r *mcp.PromptListChangedRequest) { notes.add("prompts/list_changed", r.Params) },
		ResourceListChangedHandler: func(_ context.Context, r *mcp.ResourceListChangedRequest) {
			notes.add("resources/list_changed", r.Params)
		},
		ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			notes.add("resources/updated", r.Params)
		},
		LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) { notes.add("message", r.Params) },
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			notes.add("progress", r.Params)
		},
	})
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   url,
		HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, core.Errorf(core.EUnavailable, "cannot connect to Airlock at %s: %v", redactURL(url), err).
			WithHint("is Airlock running, and is the token an agent token of it?")
	}
	return sess, nil
}
