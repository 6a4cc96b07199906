package runner

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/airlock-dev/airlock/backend/core"
)

// Built-in template ids.
const (
	TemplateClaudeCode = "claude-code"
	TemplateCodex      = "codex"
	TemplateGemini     = "gemini"
	TemplateScripted   = "scripted"
	TemplateCustom     = "custom"
)

// The list placeholders: each stands alone as an argument and becomes zero
// or more arguments.
const (
	phModelArgs = "model_args"
	phExtraArgs = "extra_args"
)

// Placeholders are the names a template, a profile's arguments, its
// environment values and its prompt may use as {{name}}, with what each
// becomes. Any other name is refused before a run starts.
var Placeholders = map[string]string{
	"prompt":           "the prompt: the profile's prompt template filled in, or the default prompt",
	"mcp_config":       "the path of the run's MCP config file (mode 0600, in the run's folder, removed after the run)",
	"mcp_url":          "Airlock's MCP endpoint for the run (task purpose, the task's project)",
	"task_id":          "the task's id",
	"task_title":       "the task's title",
	"task_description": "the task's description",
	"project_id":       "the task's project id",
	"agent_id":         "the agent's id",
	"agent_name":       "the agent's name",
	"run_id":           "the run's id (the execution record's)",
	"run_dir":          "the run's own folder (removed after the run)",
	"workdir":          "the working directory",
	"model":            "the profile's model",
	"airlock":          "the path of the airlock program (for the scripted agent)",
	phModelArgs:        "alone as an argument: the template's model arguments when the profile names a model, else nothing",
	phExtraArgs:        "alone as an argument: the profile's extra arguments",
}

// DefaultPrompt is the prompt of a profile that gives none.
const DefaultPrompt = `You are {{agent_name}}, an AI agent working through Airlock on task {{task_id}} ("{{task_title}}") in project {{project_id}}.

{{task_description}}

Airlock is your MCP server "airlock": work through its tools. get_my_task and get_next_action tell you what to do; call report_completed when the task is done.`

// builtinTemplates are the launchers Airlock knows. The flags each relies
// on are in its Notes.
func builtinTemplates() []Template {
	return []Template{
		{
			ID: TemplateClaudeCode, Name: "Claude Code",
			Description: "Anthropic's Claude Code in print mode (non-interactive), with Airlock as its only MCP server.",
			Command:     "claude",
			Args: []string{"-p", "{{prompt}}", "--mcp-config", "{{mcp_config}}", "--strict-mcp-config",
				"--allowedTools", "mcp__airlock", "{{model_args}}", "{{extra_args}}"},
			ModelArgs:    []string{"--model", "{{model}}"},
			ConfigFormat: ConfigMCPServers,
			Notes: "claude -p runs one prompt and exits; --mcp-config reads the run's mcpServers file (an http server with an " +
				"Authorization header), --strict-mcp-config ignores the user's other MCP servers, and --allowedTools mcp__airlock " +
				"lets it call Airlock's tools without asking in the terminal (Airlock asks you instead). Its own Bash and Edit " +
				"tools stay off: use Airlock's built-in file and shell tools, or add flags in extra arguments.",
		},
		{
			ID: TemplateCodex, Name: "Codex CLI",
			Description: "OpenAI's Codex CLI (codex exec, non-interactive), with Airlock added as an MCP server for this run only.",
			Command:     "codex",
			Args: []string{"exec", "-c", `mcp_servers.airlock.url="{{mcp_url}}"`,
				"-c", `mcp_servers.airlock.bearer_token_env_var="AIRLOCK_TOKEN"`, "{{model_args}}", "{{extra_args}}", "{{prompt}}"},
			ModelArgs:    []string{"--model", "{{model}}"},
			ConfigFormat: ConfigMCPServers,
			TokenEnv:     true,
			Notes: "Codex has no flag for an MCP config file; -c overrides its config.toml for one invocation " +
				"(mcp_servers.<name>.url for Streamable HTTP, bearer_token_env_var naming the variable that holds the token), " +
				"so nothing is written to ~/.codex. The token is in AIRLOCK_TOKEN of the run's environment only.",
		},
		{
			ID: TemplateGemini, Name: "Gemini CLI",
			Description:  "Google's Gemini CLI in non-interactive mode (-p), with Airlock in a settings file for this run only.",
			Command:      "gemini",
			Args:         []string{"{{model_args}}", "{{extra_args}}", "-p", "{{prompt}}"},
			ModelArgs:    []string{"--model", "{{model}}"},
			Env:          map[string]string{"GEMINI_CLI_SYSTEM_SETTINGS_PATH": "{{mcp_config}}"},
			ConfigFormat: ConfigGeminiSettings,
			Notes: "Gemini CLI reads mcpServers from settings.json files; GEMINI_CLI_SYSTEM_SETTINGS_PATH points its system " +
				"settings layer (merged with the user's, mcpServers merged) at the run's file: server airlock with httpUrl " +
				"(Streamable HTTP), an Authorization header and trust: true, since Airlock asks for approval itself.",
		},
		{
			ID: TemplateScripted, Name: "Scripted agent (tests and demos)",
			Description: "airlock agent-script: a real MCP client that follows a YAML script of tool calls with expectations. " +
				"A test double for an LLM agent, not an agent.",
			Command: "{{airlock}}",
			Args: []string{"agent-script", "--mcp-config", "{{mcp_config}}", "--var", "task_id={{task_id}}",
				"--var", "project_id={{project_id}}", "--var", "run_id={{run_id}}", "--var", "agent_id={{agent_id}}", "{{extra_args}}"},
			ConfigFormat:   ConfigMCPServers,
			NeedsExtraArgs: "the script file (and any further agent-script flags)",
			Notes:          "The extra arguments are the script file and further agent-script flags; ${task_id}, ${project_id}, ${run_id} and ${agent_id} are set in the script.",
		},
		{
			ID: TemplateCustom, Name: "Custom command",
			Description: "Any program: you give the command and its arguments, with placeholders such as {{mcp_config}} and {{prompt}}.",
			Custom:      true,
			// The run's MCP config file is in the mcpServers format most
			// MCP clients read.
			ConfigFormat: ConfigMCPServers,
			Notes:        "AIRLOCK_URL, AIRLOCK_MCP_CONFIG, AIRLOCK_RUN_ID and AIRLOCK_TASK_ID are set in its environment.",
		},
	}
}

// Templates returns the built-in templates.
func Templates() []Template { return builtinTemplates() }

// TemplateByID returns the built-in template id.
func TemplateByID(id string) (Template, error) {
	for _, t := range builtinTemplates() {
		if t.ID == id {
			return t, nil
		}
	}
	var ids []string
	for _, t := range builtinTemplates() {
		ids = append(ids, t.ID)
	}
	return Template{}, core.Errorf(EUnknownTemplate, "unknown launcher template %q", id).
		WithHint("choose one of: " + strings.Join(ids, ", "))
}

// placeholderNames returns the known names, sorted, for messages.
func placeholderNames() string {
	var names []string
	for n := range Placeholders {
		names = append(names, "{{"+n+"}}")
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// expand fills the placeholders of s from vals. where names s in an error
// ("argument 3"). A name not in Placeholders, a list placeholder inside a
// longer argument and an unclosed "{{" are refused.
func expand(s, where string, vals map[string]string) (string, error) {
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			return "", core.Errorf(EUnknownPlaceholder, "%s has an unclosed {{: %q", where, s).
				WithHint("placeholders are written {{name}}; known names: " + placeholderNames())
		}
		name := strings.TrimSpace(rest[i+2 : i+2+j])
		if _, ok := Placeholders[name]; !ok {
			return "", core.Errorf(EUnknownPlaceholder, "%s uses the unknown placeholder {{%s}}", where, name).
				WithHint("known names: " + placeholderNames())
		}
		if name == phModelArgs || name == phExtraArgs {
			return "", core.Errorf(EUnknownPlaceholder, "%s: {{%s}} must stand alone as an argument", where, name)
		}
		b.WriteString(vals[name])
		rest = rest[i+2+j+2:]
	}
}

// listPlaceholder reports whether arg is exactly a list placeholder, and
// which.
func listPlaceholder(arg string) (string, bool) {
	t := strings.TrimSpace(arg)
	if !strings.HasPrefix(t, "{{") || !strings.HasSuffix(t, "}}") {
		return "", false
	}
	name := strings.TrimSpace(t[2 : len(t)-2])
	if name == phModelArgs || name == phExtraArgs {
		return name, true
	}
	return "", false
}

// expandArgs fills the placeholders of args; the list placeholders become
// lists (lists themselves are expanded with vals, without lists).
func expandArgs(args []string, what string, vals map[string]string, lists map[string][]string) ([]string, error) {
	out := []string{}
	for i, a := range args {
		where := fmt.Sprintf("%s argument %d", what, i+1)
		if name, ok := listPlaceholder(a); ok {
			for k, la := range lists[name] {
				v, err := expand(la, fmt.Sprintf("%s (%s %d)", where, strings.ReplaceAll(name, "_", " "), k+1), vals)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
			continue
		}
		v, err := expand(a, where, vals)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// commandLine is how a command line is shown: its arguments before their
// placeholders are filled in, quoted where they hold spaces.
func commandLine(program string, args []string) string {
	parts := []string{quoteArg(program)}
	for _, a := range args {
		parts = append(parts, quoteArg(a))
	}
	return strings.Join(parts, " ")
}

func quoteArg(a string) string {
	if a == "" || strings.ContainsAny(a, " \t\n'\"\\$") {
		return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return a
}

// withExtraArgs returns the template's arguments with "{{extra_args}}"
// at the end when the template has no place for them.
func withExtraArgs(args []string) []string {
	if slices.ContainsFunc(args, func(a string) bool { n, ok := listPlaceholder(a); return ok && n == phExtraArgs }) {
		return args
	}
	return append(slices.Clone(args), "{{"+phExtraArgs+"}}")
}
