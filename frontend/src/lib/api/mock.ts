// Demo backend for screenshots and UI work without Go: loaded only when the
// page is opened with `?mock=1` (see getTransport). It is never a fallback.
import { ApiError, type Transport } from './transport';
import type { Approval, AuditRecord, Rule, RuleInput, ServerView, ToolInfo } from './types';

const now = () => new Date().toISOString();

function tool(serverId: string, name: string, description: string, annotations?: ToolInfo['annotations']): ToolInfo {
  return { serverId, name, exposedName: `${serverId}__${name}`, description, annotations };
}

export function mockTransport(): Transport {
  const listeners = new Map<string, Set<(p: unknown) => void>>();
  const emit = (name: string, payload: unknown) => listeners.get(name)?.forEach((fn) => fn(payload));

  const servers: ServerView[] = [
    {
      config: { id: 'everything', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything', 'stdio'] },
      status: {
        id: 'everything', transport: 'stdio', state: 'running', pid: 48211, restarts: 0, since: now(),
        stderrTail: ['Starting default (STDIO) server...', 'Secure MCP Everything Server running on stdio'],
        tools: [
          tool('everything', 'echo', 'Echoes back the input string', { readOnlyHint: true }),
          tool('everything', 'get-sum', 'Returns the sum of two numbers', { readOnlyHint: true, idempotentHint: true }),
          tool('everything', 'trigger-long-running-operation', 'Demonstrates a long running operation with progress updates'),
          tool('everything', 'get-tiny-image', 'Returns a tiny MCP logo image'),
        ],
      },
    },
    {
      config: { id: 'filesystem', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/me/projects'] },
      status: {
        id: 'filesystem', transport: 'stdio', state: 'running', pid: 48230, restarts: 1, since: now(), stderrTail: ['Secure MCP Filesystem Server running on stdio'],
        tools: [
          tool('filesystem', 'read_text_file', 'Read the complete contents of a file as text', { readOnlyHint: true }),
          tool('filesystem', 'write_file', 'Create a new file or completely overwrite an existing file', { destructiveHint: true }),
          tool('filesystem', 'move_file', 'Move or rename files and directories', { destructiveHint: true, idempotentHint: false }),
        ],
      },
    },
    {
      config: { id: 'weather', url: 'https://weather.example.com/mcp', type: 'http', headers: { Authorization: 'Bearer ••••' } },
      status: {
        id: 'weather', transport: 'http', state: 'failed', restarts: 5, since: now(), stderrTail: [],
        lastError: 'connect: dial tcp 203.0.113.7:443: i/o timeout', tools: [],
      },
    },
  ];

  const t0 = Date.now();
  const rules: Rule[] = [
    { id: 'r1', serverId: 'filesystem', toolName: null, toolPattern: 'read_*', autoApprove: true, priority: 10, conditions: [], agentId: null, sessionId: null, expiresAt: null, createdAt: now(), updatedAt: now() },
    { id: 'r2', serverId: 'filesystem', toolName: null, toolPattern: 'delete_*', autoApprove: false, priority: 10, conditions: [], agentId: null, sessionId: null, expiresAt: null, createdAt: now(), updatedAt: now() },
    { id: 'r3', serverId: 'filesystem', toolName: 'write_file', toolPattern: null, autoApprove: true, priority: 5, conditions: [{ path: '$.path', op: 'inside', value: '/home/me/projects/scratch' }], agentId: 'claude-code', sessionId: null, expiresAt: new Date(t0 + 8 * 3600e3).toISOString(), createdAt: now(), updatedAt: now() },
    { id: 'r4', serverId: 'weather', toolName: null, toolPattern: null, autoApprove: true, priority: 1, conditions: [], agentId: null, sessionId: null, expiresAt: null, createdAt: now(), updatedAt: now() },
    { id: 'r5', serverId: 'weather', toolName: 'forecast', toolPattern: null, autoApprove: false, priority: 0, conditions: [], agentId: null, sessionId: null, expiresAt: null, createdAt: now(), updatedAt: now() },
    { id: 'r6', serverId: null, toolName: null, toolPattern: null, autoApprove: false, priority: 0, conditions: [], agentId: null, sessionId: null, expiresAt: null, createdAt: now(), updatedAt: now() },
  ];
  let nextRule = 7;

  const decisions: AuditRecord['decision'][] = ['allow', 'approved', 'allow', 'declined', 'allow', 'error', 'timeout'];
  const activity: AuditRecord[] = Array.from({ length: 14 }, (_, i) => {
    const d = decisions[i % decisions.length];
    return {
      id: 100 - i, time: new Date(t0 - i * 47_000).toISOString(), agent: i % 3 ? 'claude-code' : 'cursor', session: `s-${(i % 2) + 1}`,
      server: i % 2 ? 'filesystem' : 'everything', tool: i % 2 ? 'read_text_file' : 'echo',
      arguments: i % 2 ? JSON.stringify({ path: `/home/me/projects/airlock/file${i}.go` }) : JSON.stringify({ message: `hello ${i}` }),
      argsDigest: 'sha256:9f2c…', decision: d, reason: d === 'allow' ? 'rule r1 (read_* on filesystem) auto-approves' : d === 'error' ? 'unknown tool' : 'no rule matched: ask',
      ruleId: d === 'allow' ? 'r1' : undefined, ruleSetVersion: 3, approver: d === 'approved' ? 'owner' : undefined, waitMs: d === 'approved' ? 4200 : undefined,
      status: d === 'error' ? 'error' : d === 'declined' || d === 'timeout' ? 'error' : 'ok', errorCode: d === 'error' ? 'not_found' : undefined,
      error: d === 'error' ? 'tool everything__nope not found' : undefined, latencyUs: 180 + i * 37,
    };
  });

  const approvals: Approval[] = [];
  let nextApproval = 1;
  function request(server: string, toolName: string, args: unknown, risk: Approval['risk'], warning: string) {
    const a: Approval = {
      id: `ap-${nextApproval++}`, agent: 'claude-code', session: 'task · s-1', server, tool: toolName, exposedName: `${server}__${toolName}`,
      arguments: args, risk, warning, ruleId: 'r6', reason: 'no rule matched: ask', ruleSetVersion: 3, createdAt: now(),
      deadline: new Date(Date.now() + 300_000).toISOString(), status: 'pending',
      annotations: risk === 'destructive' ? { destructiveHint: true } : undefined,
    };
    approvals.push(a);
    emit('approval:requested', a);
  }
  const params = typeof location !== 'undefined' ? new URLSearchParams(location.search) : new URLSearchParams();
  const empty = params.get('empty') === '1';
  if (empty) {
    servers.length = 0;
    activity.length = 0;
    rules.length = 0;
  }
  if (params.get('approvals') !== '0' && !empty) {
    setTimeout(() => {
      request('filesystem', 'write_file', { path: '/home/me/projects/airlock/README.md', content: '# Airlock\n\nA gateway between AI agents and their MCP servers.\n', overwrite: true }, 'destructive', 'This tool is marked destructive: it may delete or overwrite data.');
      request('everything', 'get-tiny-image', {}, 'unknown', 'The server gives no hints about what this tool does.');
      request('weather', 'forecast', { city: 'Berlin', days: 3 }, 'open_world', 'This tool reaches outside your machine (open world).');
    }, 400);
  }

  const resolve = (id: string, status: Approval['status'], declineReason?: string) => {
    const i = approvals.findIndex((a) => a.id === id);
    if (i < 0) throw new ApiError('not_found', `approval ${id} is not waiting`);
    const [a] = approvals.splice(i, 1);
    emit('approval:resolved', { ...a, status, decidedBy: 'owner', declineReason });
    return null;
  };

  const toRule = (input: RuleInput, id = `r${nextRule++}`): Rule => ({ ...input, id, createdAt: now(), updatedAt: now() });
  const rulesChanged = () => emit('rules:changed', { version: Date.now() });

  const methods: Record<string, (...a: any[]) => unknown> = {
    ListServers: () => servers,
    GetConfigState: () => ({ path: '~/.config/airlock/servers.json', loadedAt: now(), error: params.get('configError') ? 'servers.json line 7: invalid character \'}\' looking for beginning of object key string' : undefined }),
    AddServer: (cfg) => { const v = { config: cfg, status: { id: cfg.id, transport: cfg.url ? 'http' : 'stdio', state: 'starting', restarts: 0, stderrTail: [], tools: [], since: now() } } as ServerView; servers.push(v); return v; },
    UpdateServer: (cfg) => { const v = servers.find((s) => s.config.id === cfg.id)!; v.config = cfg; return v; },
    RemoveServer: (id) => { servers.splice(servers.findIndex((s) => s.config.id === id), 1); return null; },
    RestartServer: () => null,
    AcceptToolChange: () => null,
    ImportServers: () => ({ added: ['memory'], skipped: [{ id: 'everything', reason: 'a server with this id exists already' }] }),
    ExportActivity: () => JSON.stringify(activity, null, 2),
    ListActivity: (f) => activity.filter((r) => (!f.agent || r.agent === f.agent) && (!f.server || r.server === f.server) && (!f.tool || r.tool === f.tool) && (!f.decision || r.decision === f.decision)),
    GetInfo: () => ({ version: '0.1.0-dev', mcpUrl: 'http://127.0.0.1:7801/mcp', sseUrl: 'http://127.0.0.1:7801/sse', agentToken: 'alk_agent_7c1e4f0d9b2a48e6a5f3', dataDir: '~/.local/share/airlock', configPath: '~/.config/airlock/servers.json' }),
    ListRules: () => rules,
    CreateRule: (input) => { const r = toRule(input); rules.push(r); rules.sort((a, b) => b.priority - a.priority); rulesChanged(); return r; },
    UpdateRule: (id, input) => { const i = rules.findIndex((r) => r.id === id); rules[i] = { ...rules[i], ...input, updatedAt: now() }; rules.sort((a, b) => b.priority - a.priority); rulesChanged(); return rules[i]; },
    DeleteRule: (id) => { rules.splice(rules.findIndex((r) => r.id === id), 1); rulesChanged(); return null; },
    GetRulesState: () => ({ version: 1 }),
    MoveRule: () => rules,
    ShadowedRules: () => (rules.some((r) => r.id === 'r5') ? [{ ruleId: 'r5', byRuleId: 'r4', why: 'r4 matches every tool of weather at a higher priority' }] : []),
    TestRule: (t) => {
      const fired = rules.find((r) => (!r.serverId || r.serverId === t.serverId) && (!r.toolName || r.toolName === t.toolName)) ?? null;
      const skipped = rules.slice(0, fired ? rules.indexOf(fired) : rules.length).map((rule) => ({ rule, why: rule.serverId !== t.serverId ? `server is ${t.serverId}, rule wants ${rule.serverId}` : `tool ${t.toolName} does not match` }));
      return { decision: { autoApprove: !!fired?.autoApprove, ruleId: fired?.id ?? null, ruleSetVersion: 3, reason: fired ? `rule ${fired.id} fired` : 'no rule matched: ask' }, fired, skipped };
    },
    ExportRules: () => JSON.stringify({ rules }, null, 2),
    ImportRules: () => 2,
    ListApprovals: () => approvals,
    Approve: (id) => resolve(id, 'approved'),
    Decline: (id, reason) => resolve(id, 'declined', reason),
    ApproveAndAddRule: (id) => resolve(id, 'approved'),
    GetSettings: () => ({ approvalTimeoutSeconds: 300 }),
    SetSettings: () => null,
  };

  return {
    kind: 'mock',
    async call(method, args) {
      await new Promise((r) => setTimeout(r, 120));
      const fn = methods[method];
      if (!fn) throw new ApiError('internal', `mock has no ${method}`);
      return structuredClone(fn(...args) ?? null);
    },
    subscribe(name, fn) {
      let set = listeners.get(name);
      if (!set) listeners.set(name, (set = new Set()));
      set.add(fn);
      return () => set.delete(fn);
    },
    onReconnect: () => () => {},
  };
}
