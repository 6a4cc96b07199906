// Demo data for agent runs (part of mock.ts, loaded only with `?mock=1` on
// the dev server): the launcher templates, scout's run profile, the runs of
// the pricing-page task of mockTeams.ts (one alive, streaming output and
// waiting on a file write; one failed), and Start/Stop that behave like the
// runner's.
import { ApiError } from './transport';
import type { LogQuery, Profile, Run, RunnerSettings, Template } from './types';

type Handlers = Record<string, (...a: any[]) => unknown>;

const TEMPLATES: Template[] = [
  {
    id: 'claude-code', name: 'Claude Code', description: "Anthropic's Claude Code in print mode (non-interactive), with Airlock as its only MCP server.", command: 'claude',
    args: ['-p', '{{prompt}}', '--mcp-config', '{{mcp_config}}', '--strict-mcp-config', '--allowedTools', 'mcp__airlock', '{{model_args}}', '{{extra_args}}'],
    modelArgs: ['--model', '{{model}}'], env: {}, configFormat: 'mcpServers', tokenEnv: false, custom: false,
    notes: 'claude -p runs one prompt and exits; --strict-mcp-config ignores the user\'s other MCP servers, and --allowedTools mcp__airlock lets it call Airlock\'s tools without asking in the terminal (Airlock asks you instead).',
  },
  {
    id: 'codex', name: 'Codex CLI', description: "OpenAI's Codex CLI (codex exec, non-interactive), with Airlock added as an MCP server for this run only.", command: 'codex',
    args: ['exec', '-c', 'mcp_servers.airlock.url="{{mcp_url}}"', '-c', 'mcp_servers.airlock.bearer_token_env_var="AIRLOCK_TOKEN"', '{{model_args}}', '{{extra_args}}', '{{prompt}}'],
    modelArgs: ['--model', '{{model}}'], env: {}, configFormat: 'mcpServers', tokenEnv: true, custom: false,
    notes: 'Codex has no flag for an MCP config file; -c overrides its config.toml for one invocation, so nothing is written to ~/.codex.',
  },
  {
    id: 'gemini', name: 'Gemini CLI', description: "Google's Gemini CLI in non-interactive mode (-p), with Airlock in a settings file for this run only.", command: 'gemini',
    args: ['{{model_args}}', '{{extra_args}}', '-p', '{{prompt}}'], modelArgs: ['--model', '{{model}}'], env: { GEMINI_CLI_SYSTEM_SETTINGS_PATH: '{{mcp_config}}' },
    configFormat: 'geminiSettings', tokenEnv: false, custom: false, notes: 'GEMINI_CLI_SYSTEM_SETTINGS_PATH points its system settings layer at the run\'s file.',
  },
  {
    id: 'scripted', name: 'Scripted agent (tests and demos)', description: 'airlock agent-script: a real MCP client that follows a YAML script of tool calls with expectations. A test double for an LLM agent, not an agent.',
    command: '{{airlock}}', args: ['agent-script', '--mcp-config', '{{mcp_config}}', '--var', 'task_id={{task_id}}', '--var', 'project_id={{project_id}}', '--var', 'run_id={{run_id}}', '--var', 'agent_id={{agent_id}}', '{{extra_args}}'],
    modelArgs: [], env: {}, configFormat: 'mcpServers', tokenEnv: false, custom: false, needsExtraArgs: 'the script file (and any further agent-script flags)',
    notes: 'The extra arguments are the script file and further agent-script flags; ${task_id}, ${project_id}, ${run_id} and ${agent_id} are set in the script.',
  },
  {
    id: 'custom', name: 'Custom command', description: 'Any program: you give the command and its arguments, with placeholders such as {{mcp_config}} and {{prompt}}.',
    command: '', args: [], modelArgs: [], env: {}, configFormat: 'mcpServers', tokenEnv: false, custom: true,
    notes: 'AIRLOCK_URL, AIRLOCK_MCP_CONFIG, AIRLOCK_RUN_ID and AIRLOCK_TASK_ID are set in its environment.',
  },
];

const PLACEHOLDERS: Record<string, string> = {
  prompt: 'the prompt: the profile\'s prompt template filled in, or the default prompt',
  mcp_config: 'the path of the run\'s MCP config file (mode 0600, in the run\'s folder, removed after the run)',
  mcp_url: 'Airlock\'s MCP endpoint for the run (task purpose, the task\'s project)',
  task_id: 'the task\'s id', task_title: 'the task\'s title', task_description: 'the task\'s description', project_id: 'the task\'s project id',
  agent_id: 'the agent\'s id', agent_name: 'the agent\'s name', run_id: 'the run\'s id (the execution record\'s)', run_dir: 'the run\'s own folder (removed after the run)',
  workdir: 'the working directory', model: 'the profile\'s model', airlock: 'the path of the airlock program (for the scripted agent)',
  model_args: 'alone as an argument: the template\'s model arguments when the profile names a model, else nothing',
  extra_args: 'alone as an argument: the profile\'s extra arguments',
};

export function runMethods(emit: (name: string, payload: unknown) => void, empty: boolean): Handlers {
  const ago = (min: number) => new Date(Date.now() - min * 60_000).toISOString();
  const stamp = (d = new Date()) => `[${d.toISOString().replace(/\.\d+Z$/, 'Z')}]`;
  let settings: RunnerSettings = { autoRun: false, maxConcurrent: 2, maxAttempts: 3, retryBackoffSeconds: 30, stopGraceSeconds: 5 };
  const profiles: Record<string, Profile> = empty
    ? {}
    : {
        ag_scout: { agentId: 'ag_scout', template: 'claude-code', command: '', args: [], extraArgs: ['--max-turns', '30'], workDir: '/home/me/projects/site', model: 'sonnet', env: {}, prompt: '', updatedAt: ago(300) },
        ag_writer: { agentId: 'ag_writer', template: 'custom', command: '/opt/agents/writer-bot', args: ['--mcp', '{{mcp_config}}', '{{prompt}}'], extraArgs: [], workDir: '', model: '', env: {}, prompt: '', updatedAt: ago(200) },
      };
  const command = 'claude -p {{prompt}} --mcp-config {{mcp_config}} --strict-mcp-config --allowedTools mcp__airlock --model sonnet --max-turns 30';
  const runs: Run[] = empty
    ? []
    : [
        {
          id: 'exec_2', taskId: 'tsk_001', agentId: 'ag_scout', projectId: 'pj_site', status: 'running', trigger: 'manual', attempt: 0, template: 'claude-code', command,
          workDir: '/home/me/projects/site', pid: 51234, exitCode: null, startedAt: ago(6), endedAt: null, logPath: '~/.local/share/airlock/runs/exec_2.log',
          lastTool: { server: 'file-write', tool: 'file_write', status: 'running', at: ago(0.3) },
        },
        {
          id: 'exec_1', taskId: 'tsk_001', agentId: 'ag_scout', projectId: 'pj_site', status: 'failed', trigger: 'auto', attempt: 1, template: 'claude-code', command,
          workDir: '/home/me/projects/site', exitCode: 1, startedAt: ago(50), endedAt: ago(44), logPath: '~/.local/share/airlock/runs/exec_1.log',
          reason: 'exit status 1; auto-run tries again in 30s (attempt 2 of 3)',
        },
      ];
  const at = (min: number) => stamp(new Date(Date.now() - min * 60_000));
  const logs: Record<string, string[]> = {
    exec_2: [
      `${at(6)} [airlock] run exec_2 of task tsk_001 by agent scout (manual)`,
      `${at(6)} [airlock] command: ${command}`,
      `${at(6)} [airlock] working directory: /home/me/projects/site`,
      `${at(6)} [airlock] started, process 51234`,
      `${at(5.8)} I'll start by reading the task and the current pricing page.`,
      `${at(5.7)} → get_my_task`,
      `${at(5.6)} tsk_001 "Redesign the pricing page" (in_progress, high)`,
      `${at(5)} → file-read__file_read {"path": "site/pricing.html"}`,
      `${at(4.9)} 412 lines read. The page has two tiers and the FAQ at the bottom.`,
      `${at(2)} Writing the new page with three tiers and a comparison table.`,
      `${at(0.3)} → file-write__file_write {"path": "site/pricing.html", "overwrite": true}`,
    ],
    exec_1: [
      `${at(50)} [airlock] run exec_1 of task tsk_001 by agent scout (auto)`,
      `${at(50)} [airlock] started, process 50877`,
      `${at(49)} → get_my_task`,
      `${at(44)} Error: the MCP server "airlock" did not answer within 30s`,
      `${at(44)} [airlock] ended: failed (exit status 1); auto-run tries again in 30s (attempt 2 of 3)`,
    ],
  };
  // The live run keeps writing, as an agent thinking aloud does.
  const thoughts = ['Waiting for the write to be approved…', 'Still waiting: Airlock asked a person to approve file_write.', 'Checking the comparison table layout.'];
  let k = 0;
  if (!empty && typeof setInterval !== 'undefined') {
    setInterval(() => {
      const live = runs.find((r) => r.id === 'exec_2' && r.status === 'running');
      if (!live) return;
      const line = `${stamp()} ${thoughts[k++ % thoughts.length]}`;
      logs.exec_2.push(line);
      emit('run:output', { runId: 'exec_2', taskId: live.taskId, lines: [line], first: logs.exec_2.length - 1 });
    }, 2500);
  }

  const end = (r: Run, status: string, exitCode: number | null, reason: string) => {
    Object.assign(r, { status, exitCode, reason, endedAt: new Date().toISOString(), pid: undefined });
    const line = `${stamp()} [airlock] ended: ${status}${reason ? `; ${reason}` : ''}`;
    const log = (logs[r.id] ??= []);
    log.push(line);
    emit('run:output', { runId: r.id, taskId: r.taskId, lines: [line], first: log.length - 1 });
    emit('run:status', r);
  };

  return {
    'Runs.Templates': () => TEMPLATES,
    'Runs.Placeholders': () => PLACEHOLDERS,
    'Runs.Profiles': () => Object.values(profiles),
    'Runs.Profile': (id: string) => {
      if (!profiles[id]) throw new ApiError('no_run_profile', `agent ${id} has no run profile`);
      return profiles[id];
    },
    'Runs.SetProfile': (id: string, p: Profile) => {
      if (p.workDir && !p.workDir.startsWith('/home/me/projects/site')) {
        throw new ApiError('workdir_outside_roots', `the working directory ${p.workDir} is outside the folders allowed for agents (/home/me/projects/site)`, 'choose a folder inside one of them, or allow it on the Built-in tools screen');
      }
      profiles[id] = { ...p, agentId: id, updatedAt: new Date().toISOString() };
      return profiles[id];
    },
    'Runs.CheckCommand': (p: Profile) => {
      // The demo machine has Claude Code and Airlock, nothing else.
      const tmpl = TEMPLATES.find((t) => t.id === p.template);
      const cmd = p.command || tmpl?.command || '';
      if (cmd === '{{airlock}}') return { path: '/usr/local/bin/airlock' };
      if (cmd === 'claude' || cmd.startsWith('/')) return { path: cmd.startsWith('/') ? cmd : '/usr/local/bin/claude' };
      return { path: '', warning: `the command ${JSON.stringify(cmd)} was not found in PATH`, hint: "install it, or give its full path as the command of the agent's run profile" };
    },
    'Runs.DeleteProfile': (id: string) => {
      delete profiles[id];
      return null;
    },
    'Runs.Settings': () => settings,
    'Runs.SetSettings': (s: RunnerSettings) => (settings = s),
    'Runs.List': (taskId: string) => runs.filter((r) => r.taskId === taskId),
    'Runs.Live': () => runs.filter((r) => r.status === 'running'),
    'Runs.Get': (id: string) => runs.find((r) => r.id === id),
    'Runs.Log': (id: string, q: LogQuery) => {
      const lines = logs[id] ?? [];
      const take = lines.slice(-(q.tail ?? 100));
      return { runId: id, status: runs.find((r) => r.id === id)?.status ?? 'failed', lines: take, totalLines: lines.length, offset: lines.length - take.length, truncated: take.length < lines.length };
    },
    'Runs.Start': (taskId: string) => {
      if (runs.some((r) => r.taskId === taskId && r.status === 'running')) throw new ApiError('conflict', `task ${taskId} is running already`, 'stop that run first');
      throw new ApiError('command_not_found', 'the command /opt/agents/writer-bot does not exist', 'check the command of the agent\'s run profile');
    },
    'Runs.Stop': (id: string) => {
      const r = runs.find((x) => x.id === id);
      if (!r || r.status !== 'running') throw new ApiError('conflict', `run ${id} is not running`);
      end(r, 'stopped', 143, 'stopped by the user');
      return r;
    },
  };
}
