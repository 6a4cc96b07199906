package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/backend/authz"
	"github.com/airlock-dev/airlock/backend/core"
	"github.com/airlock-dev/airlock/backend/fsutil"
	"github.com/airlock-dev/airlock/backend/proc"
)

// plan is a launch checked in full before anything starts: only the values
// known once the execution record exists (run id, run folder, token) are
// still to be filled in.
type plan struct {
	template Template
	profile  Profile
	program  string // resolved path of the program
	args     []string
	dir      string // the resolved working directory
	display  string
	task     Task
	agent    authz.Agent
}

// envKey is what an environment variable's name may be.
var envKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// CheckProfile checks what a profile says on its own: its template, its
// command and arguments, its placeholders and its environment. The working
// directory is checked against the allowed folders by the runner.
func CheckProfile(p Profile) (Template, error) {
	t, err := TemplateByID(p.Template)
	if err != nil {
		return Template{}, err
	}
	if t.Custom {
		if strings.TrimSpace(p.Command) == "" {
			return Template{}, core.Errorf(core.EInvalid, "the custom launcher needs a command").
				WithHint("give the program to run (a name in PATH or a full path) and its arguments")
		}
	} else if len(p.Args) > 0 {
		return Template{}, core.Errorf(core.EInvalid, "only the custom launcher takes arguments; the %s launcher has its own", t.Name).
			WithHint("put additions in the extra arguments")
	}
	if t.NeedsExtraArgs != "" && len(p.ExtraArgs) == 0 {
		return Template{}, core.Errorf(core.EInvalid, "the %s launcher needs extra arguments: %s", t.Name, t.NeedsExtraArgs)
	}
	if strings.Contains(p.Command, "{{") {
		return Template{}, core.Errorf(EUnknownPlaceholder, "the command cannot hold placeholders: %q", p.Command).
			WithHint("give the program's name or full path; placeholders go in the arguments")
	}
	if p.Command != "" && strings.Contains(p.Command, "/") && !filepath.IsAbs(p.Command) {
		return Template{}, core.Errorf(core.EInvalid, "the command %q is a relative path", p.Command).
			WithHint("give a name found in PATH or a full path")
	}
	if p.WorkDir != "" && !filepath.IsAbs(p.WorkDir) {
		return Template{}, core.Errorf(core.EInvalid, "the working directory %q is not an absolute path", p.WorkDir)
	}
	for k := range p.Env {
		if !envKey.MatchString(k) {
			return Template{}, core.Errorf(core.EInvalid, "%q is not an environment variable name", k)
		}
		if strings.HasPrefix(strings.ToUpper(k), "AIRLOCK_") {
			return Template{}, core.Errorf(core.EInvalid, "%s: the AIRLOCK_ variables are set by Airlock for each run", k)
		}
	}
	// Every placeholder is checked by filling it in with stand-ins.
	vals := map[string]string{}
	for n := range Placeholders {
		vals[n] = "x"
	}
	lists := map[string][]string{phModelArgs: t.ModelArgs, phExtraArgs: p.ExtraArgs}
	if _, err := expandArgs(withExtraArgs(argsOf(t, p)), "the launcher's", vals, lists); err != nil {
		return Template{}, err
	}
	if _, err := expand(promptOf(p), "the prompt", vals); err != nil {
		return Template{}, err
	}
	for _, k := range sortedKeys(p.Env) {
		if _, err := expand(p.Env[k], "environment variable "+k, vals); err != nil {
			return Template{}, err
		}
	}
	for _, k := range sortedKeys(t.Env) {
		if _, err := expand(t.Env[k], "environment variable "+k, vals); err != nil {
			return Template{}, err
		}
	}
	return t, nil
}

func argsOf(t Template, p Profile) []string {
	if t.Custom {
		return p.Args
	}
	return t.Args
}

func promptOf(p Profile) string {
	if strings.TrimSpace(p.Prompt) == "" {
		return DefaultPrompt
	}
	return p.Prompt
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// workDir checks dir against the allowed folders and returns it resolved
// (symbolic links followed): an empty dir is the first allowed folder.
func workDir(dir string, roots, protected []string) (string, error) {
	var real []string
	for _, r := range roots {
		if rr, err := filepath.EvalSymlinks(r); err == nil {
			real = append(real, rr)
		}
	}
	if len(real) == 0 {
		return "", core.Errorf(EWorkDirOutsideRoots, "no folder is allowed for agents to work in").
			WithHint("allow one on the Built-in tools screen or with 'airlock builtin allow-path DIR'; an agent's working directory must be inside one")
	}
	if dir == "" {
		dir = real[0]
	}
	if !filepath.IsAbs(dir) {
		return "", core.Errorf(core.EInvalid, "the working directory %q is not an absolute path", dir)
	}
	rd, err := filepath.EvalSymlinks(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", core.Errorf(core.EInvalid, "the working directory %s does not exist", dir)
	}
	if err != nil {
		return "", core.Errorf(core.EInvalid, "the working directory %s cannot be used: %v", dir, err)
	}
	if fi, err := os.Stat(rd); err != nil || !fi.IsDir() {
		return "", core.Errorf(core.EInvalid, "the working directory %s is not a folder", dir)
	}
	for _, p := range protected {
		rp, err := filepath.EvalSymlinks(p)
		if err != nil {
			rp = filepath.Clean(p)
		}
		if inside(rd, rp) {
			// A run's agent reads its working directory unasked (Claude
			// Code's Read): the shared token is there (found by a new-user
			// test: the built-in tools refused the folder, runs did not).
			return "", core.Errorf(EWorkDirProtected, "the working directory %s is in Airlock's data directory (%s), where its tokens and rules are", dir, p).
				WithHint("choose a folder of your project")
		}
	}
	for _, r := range real {
		if inside(rd, r) {
			return rd, nil
		}
	}
	return "", core.Errorf(EWorkDirOutsideRoots, "the working directory %s is outside the folders allowed for agents (%s)", dir, strings.Join(roots, ", ")).
		WithHint("choose a folder inside one of them, or allow it on the Built-in tools screen")
}

// inside reports whether path is root or below it (both resolved).
func inside(path, root string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// program resolves the program a launch starts, in the PATH of env.
func program(t Template, p Profile, airlockBin string, env []string) (string, error) {
	cmd := t.Command
	if p.Command != "" {
		cmd = p.Command
	}
	if cmd == "{{airlock}}" {
		cmd = airlockBin
		if cmd == "" {
			return "", core.Errorf(ECommandNotFound, "the path of the airlock program is unknown")
		}
	}
	if strings.Contains(cmd, "/") {
		fi, err := os.Stat(cmd)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return "", core.Errorf(ECommandNotFound, "the command %s does not exist", cmd).
				WithHint("check the command of the agent's run profile")
		case err != nil:
			return "", core.Errorf(ECommandNotFound, "the command %s cannot be used: %v", cmd, err)
		case !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0:
			return "", core.Errorf(ECommandNotFound, "the command %s is not an executable file", cmd)
		}
		return cmd, nil
	}
	path, err := proc.LookPath(cmd, env)
	if err != nil {
		return "", core.Errorf(ECommandNotFound, "the command %q was not found in PATH", cmd).
			WithHint("install it, or give its full path as the command of the agent's run profile")
	}
	return path, nil
}

// baseEnv is the environment a run inherits: Airlock's own, without its
// AIRLOCK_ variables (which may carry the owner's token: the bridge reads
// AIRLOCK_TOKEN).
func baseEnv(environ []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(strings.ToUpper(k), "AIRLOCK_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// setEnv sets k=v in env, replacing an earlier value.
func setEnv(env []string, k, v string) []string {
	env = slices.DeleteFunc(env, func(kv string) bool { return strings.HasPrefix(kv, k+"=") })
	return append(env, k+"="+v)
}

// runURL is the MCP endpoint a run connects to: the session purpose is
// task, and the project the task's.
func runURL(base, projectID string) string {
	q := url.Values{"purpose": {core.PurposeTask}}
	if projectID != "" {
		q.Set("project", projectID)
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + q.Encode()
}

// configFile is the name of the per-run MCP config file.
func configFile(format string) string {
	if format == ConfigGeminiSettings {
		return "settings.json"
	}
	return "mcp.json"
}

// writeConfig writes the per-run MCP config (mode 0600): the server
// "airlock" at mcpURL with the run's token.
func writeConfig(path, format, mcpURL, token string) error {
	headers := map[string]string{"Authorization": "Bearer " + token}
	var server map[string]any
	if format == ConfigGeminiSettings {
		// trust: Airlock asks the user itself; Gemini need not ask too.
		server = map[string]any{"httpUrl": mcpURL, "headers": headers, "trust": true}
	} else {
		server = map[string]any{"type": "http", "url": mcpURL, "headers": headers}
	}
	b, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"airlock": server}}, "", "  ")
	if err != nil {
		return err
	}
	if err := fsutil.WriteFileAtomic(path, b); err != nil {
		return fmt.Errorf("write the run's MCP config: %w", err)
	}
	return nil
}
