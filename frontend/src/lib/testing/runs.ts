// Runs, templates and profiles for the runs tests, shaped as the backend
// sends them (runner.Run, runner.Template, runner.Profile).
import type { Profile, Run, RunnerSettings, Template } from '../api';

export function run(id: string, more: Partial<Run> = {}): Run {
  return {
    id, taskId: 'tk_1', agentId: 'ag_bob', projectId: 'pr_1', status: 'running', trigger: 'manual', attempt: 0, template: 'scripted',
    command: 'airlock agent-script --mcp-config {{mcp_config}} /tmp/s.yaml', workDir: '/work', pid: 4242, exitCode: null,
    startedAt: '2026-01-01T10:00:00Z', endedAt: null, logPath: `/data/logs/${id}.log`, lastTool: null, ...more,
  };
}

export function profile(agentId: string, more: Partial<Profile> = {}): Profile {
  return { agentId, template: 'claude-code', command: '', args: [], extraArgs: [], workDir: '', model: '', env: {}, prompt: '', updatedAt: '2026-01-01T00:00:00Z', ...more };
}

export function settings(more: Partial<RunnerSettings> = {}): RunnerSettings {
  return { autoRun: false, maxConcurrent: 2, maxAttempts: 3, retryBackoffSeconds: 30, stopGraceSeconds: 5, ...more };
}

/** The backend's placeholders (runner.Placeholders), shortened. */
export const PLACEHOLDERS: Record<string, string> = {
  prompt: 'the prompt', mcp_config: 'the path of the run\'s MCP config file', mcp_url: 'Airlock\'s MCP endpoint for the run', task_id: 'the task\'s id',
  task_title: 'the task\'s title', task_description: 'the task\'s description', project_id: 'the task\'s project id', agent_id: 'the agent\'s id',
  agent_name: 'the agent\'s name', run_id: 'the run\'s id', run_dir: 'the run\'s own folder', workdir: 'the working directory', model: 'the profile\'s model',
  airlock: 'the path of the airlock program', model_args: 'alone as an argument: the model arguments', extra_args: 'alone as an argument: the extra arguments',
};

/** What Go sends for an empty (nil) list or map: null, whatever the generated type says. */
const nil = null as unknown as never;

/** The backend's templates (runner.Templates), with their real arguments, sent as Go sends them. */
export const TEMPLATES: Template[] = [
  {
    id: 'claude-code', name: 'Claude Code', description: 'Claude Code in print mode.', command: 'claude',
    args: ['-p', '{{prompt}}', '--mcp-config', '{{mcp_config}}', '--strict-mcp-config', '--allowedTools', 'mcp__airlock', '{{model_args}}', '{{extra_args}}'],
    modelArgs: ['--model', '{{model}}'], env: {}, configFormat: 'mcpServers', tokenEnv: false, custom: false, notes: 'claude -p runs one prompt and exits.',
  },
  {
    id: 'codex', name: 'Codex CLI', description: 'codex exec.', command: 'codex',
    args: ['exec', '-c', 'mcp_servers.airlock.url="{{mcp_url}}"', '{{model_args}}', '{{extra_args}}', '{{prompt}}'],
    modelArgs: ['--model', '{{model}}'], env: {}, configFormat: 'mcpServers', tokenEnv: true, custom: false, notes: '',
  },
  {
    id: 'gemini', name: 'Gemini CLI', description: 'gemini -p.', command: 'gemini', args: ['{{model_args}}', '{{extra_args}}', '-p', '{{prompt}}'],
    modelArgs: ['--model', '{{model}}'], env: { GEMINI_CLI_SYSTEM_SETTINGS_PATH: '{{mcp_config}}' }, configFormat: 'geminiSettings', tokenEnv: false, custom: false, notes: '',
  },
  {
    id: 'scripted', name: 'Scripted agent (tests and demos)', description: 'airlock agent-script.', command: '{{airlock}}',
    args: ['agent-script', '--mcp-config', '{{mcp_config}}', '--var', 'task_id={{task_id}}', '{{extra_args}}'], modelArgs: nil, env: nil,
    configFormat: 'mcpServers', tokenEnv: false, custom: false, needsExtraArgs: 'the script file (and any further agent-script flags)', notes: '',
  },
  { id: 'custom', name: 'Custom command', description: 'Any program.', command: '', args: nil, modelArgs: nil, env: nil, configFormat: 'mcpServers', tokenEnv: false, custom: true, notes: '' },
];
