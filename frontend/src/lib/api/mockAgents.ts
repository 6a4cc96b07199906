// Demo data for the Agents and Built-in tools screens (part of mock.ts,
// loaded only with `?mock=1` on the dev server).
import { ApiError } from './transport';
import type { AgentInput, AgentUpdate, AgentView, BuiltinSettings, Overview, Project, Role, RoleInput, ServerView, ToolAccess } from './types';

type Handlers = Record<string, (...a: any[]) => unknown>;

export function agentMethods(emit: (name: string, payload: unknown) => void, empty: boolean, servers: ServerView[]): Handlers {
  const now = () => new Date().toISOString();
  const t = now();
  const agent = (id: string, name: string, kind: string, parentId: string | undefined, role: string, more: Partial<AgentView> = {}): AgentView => ({
    id, name, kind, human: false, parentId, status: 'active', role, compact: false, projects: [], disabledTools: [], createdAt: t, updatedAt: t,
    tokens: [{ id: `tk_${id}`, agentId: id, prefix: 'alk_Q3v9x…', legacy: false, createdAt: t }], ...more,
  });
  const agents: AgentView[] = [
    agent('ag_owner', 'owner', 'owner', undefined, 'superuser', { human: true, tokens: [] }),
    agent('ag_default', 'default', 'manager', 'ag_owner', 'superuser', { tokens: [{ id: 'tk_legacy', agentId: 'ag_default', prefix: 'alk_agent_…', legacy: true, createdAt: t }] }),
  ];
  const projects: Project[] = [];
  /** What each demo project holds: deleting it asks first. */
  const projectContent: Record<string, string> = empty ? {} : { pj_site: '4 tasks and 1 conversation' };
  const roles: Role[] = [
    { name: 'superuser', description: 'Every tool of every server.', isDefault: false, isSuperuser: true, servers: [], tools: [], createdAt: t, updatedAt: t },
    { name: 'default', description: 'New agents get this role; it grants nothing until you grant servers to it.', isDefault: true, isSuperuser: false, servers: [], tools: [], createdAt: t, updatedAt: t },
  ];
  if (!empty) {
    projects.push(
      { id: 'pj_site', name: 'website', description: 'The marketing site', createdAt: t, updatedAt: t },
      { id: 'pj_api', name: 'api', description: '', createdAt: t, updatedAt: t },
    );
    roles.push(
      { name: 'readers', description: 'Read-only access to the file system', isDefault: false, isSuperuser: false, servers: ['filesystem', 'everything'], tools: [{ server: 'filesystem', tool: 'write_file', allowed: false }, { server: 'filesystem', tool: 'move_file', allowed: false }], createdAt: t, updatedAt: t },
      { name: 'builders', description: '', isDefault: false, isSuperuser: false, servers: ['filesystem', 'everything', 'weather'], tools: [], createdAt: t, updatedAt: t },
    );
    agents.push(
      agent('ag_lead', 'lead', 'coordinator', 'ag_owner', 'builders', { projects: ['pj_site', 'pj_api'] }),
      agent('ag_fe', 'frontend-mgr', 'manager', 'ag_lead', 'builders', { projects: ['pj_site'] }),
      agent('ag_scout', 'scout', 'worker', 'ag_fe', 'readers', { projects: ['pj_site'], disabledTools: [{ server: 'everything', tool: 'get-tiny-image' }] }),
      agent('ag_writer', 'writer', 'worker', 'ag_fe', 'builders', { projects: ['pj_site'], compact: true }),
      agent('ag_old', 'old-bot', 'worker', 'ag_lead', 'readers', { status: 'suspended' }),
      agent('ag_rev', 'reviewer', 'worker', 'ag_owner', 'readers', { human: true, status: 'disabled', tokens: [] }),
    );
  }
  const find = (ref: string) => {
    const a = agents.find((x) => x.id === ref || x.name === ref);
    if (!a) throw new ApiError('not_found', `agent ${ref} not found`);
    return a;
  };
  const role = (name: string) => {
    const r = roles.find((x) => x.name === name);
    if (!r) throw new ApiError('not_found', `role ${name} not found`);
    return r;
  };
  const changed = (ids: string[] = []) => emit('agents:changed', { agentIds: ids });
  const plain = (a: AgentView) => {
    const { tokens: _t, ...rest } = a;
    return rest;
  };
  const secret = (p: string) => p + Array.from({ length: 43 }, (_, i) => 'Q3v9xK7mB2pLw8ZtR4nY6cHs1dF5gJ0aE9uT2iO7eWq'[(i * 7) % 43]).join('');
  const link = (a: AgentView, title: string, tab: string) => `open Airlock → Agents → ${a.name} → ${title} (#/agents/${a.id}?tab=${tab})`;

  const off: string[] = [];
  let settings: BuiltinSettings = {
    roots: empty ? [] : ['/home/me/projects/site'], off, shellTimeoutSeconds: 60, outputCapBytes: 256 << 10, readCapBytes: 5 << 20, writeCapBytes: 5 << 20,
    deny: ['rm {-r,-R,--recursive} {-f,--force}', '{shutdown,reboot,halt,poweroff}', '{mkfs,mkfs.*,mke2fs,mkswap,wipefs}', 'dd of=/dev/*'],
    ask: ['{sudo,su,doas,pkexec,runuser}', '{apt,apt-get,aptitude} {install,remove,purge}', '{curl,wget,fetch} | {sh,bash,zsh}', 'git push {--force,-f,+*}'],
    envAllow: ['PATH', 'HOME', 'USER', 'LANG', 'LC_*', 'TERM', 'TZ', 'TMPDIR'], binaryMimeAllow: [], executableExtensions: ['.exe', '.sh', '.bat', '.ps1', '.so', '.dylib'], listsVersion: 3,
  };
  const defaults = structuredClone(settings);
  defaults.roots = [];
  const overview = (): Overview => ({
    settings, defaults, enabled: settings.roots.length > 0,
    roots: settings.roots.map((p) => ({ path: p, source: 'settings', available: true })),
    sandbox: { enforced: true, mechanism: 'Landlock ABI 7', hidden: ['/home/me/.config/airlock'] },
  });
  const builtinChanged = () => {
    const ov = overview();
    emit('builtin:changed', ov);
    return ov;
  };

  return {
    'Agents.List': () => agents,
    'Agents.Roles': () => roles,
    'Agents.Projects': () => projects,
    'Agents.Create': (input: AgentInput) => {
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(input.name)) throw new ApiError('invalid', `agent name "${input.name}" must be 1-64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', starting with a letter or digit`);
      if (agents.some((a) => a.name === input.name)) throw new ApiError('conflict', `an agent named "${input.name}" exists already`);
      const a = agent(`ag_${Math.random().toString(36).slice(2, 10)}`, input.name, input.kind || 'worker', input.parent || 'ag_owner', input.role || 'default', { human: input.human, projects: input.projects, compact: input.compact });
      agents.push(a);
      changed();
      return { agent: plain(a), token: secret('alk_'), passkey: secret('alp_') };
    },
    'Agents.Update': (id: string, up: AgentUpdate) => {
      const a = find(id);
      Object.assign(a, Object.fromEntries(Object.entries({ name: up.name, kind: up.kind, human: up.human, role: up.role, status: up.status, projects: up.projects, compact: up.compact }).filter(([, v]) => v != null)));
      if (up.parent != null) a.parentId = find(up.parent).id;
      changed([a.id]);
      return plain(a);
    },
    'Agents.Delete': (id: string) => {
      const a = find(id);
      const kids = agents.filter((x) => x.parentId === a.id);
      if (kids.length) throw new ApiError('conflict', `agent '${a.name}' has ${kids.length} child agent(s) (${kids.map((k) => k.name).join(', ')}); move or delete them first`);
      agents.splice(agents.indexOf(a), 1);
      changed([a.id]);
      return null;
    },
    'Agents.Suspend': (id: string) => ((find(id).status = 'suspended'), changed([id]), plain(find(id))),
    'Agents.Resume': (id: string) => ((find(id).status = 'active'), changed([id]), plain(find(id))),
    'Agents.SetCompact': (id: string, on: boolean) => ((find(id).compact = on), changed([id]), plain(find(id))),
    'Agents.SetToolEnabled': (id: string, server: string, tool: string, enabled: boolean) => {
      const a = find(id);
      a.disabledTools = a.disabledTools.filter((d) => d.server !== server || d.tool !== tool);
      if (!enabled) a.disabledTools.push({ server, tool });
      changed([id]);
      return plain(a);
    },
    'Agents.Assign': (id: string, p: string) => ((find(id).projects = [...new Set([...find(id).projects, p])]), changed([id]), plain(find(id))),
    'Agents.Unassign': (id: string, p: string) => ((find(id).projects = find(id).projects.filter((x) => x !== p)), changed([id]), plain(find(id))),
    'Agents.RotateToken': (id: string) => {
      const a = find(id);
      a.tokens = [...a.tokens.filter((x) => x.legacy), { id: `tk_${Date.now()}`, agentId: id, prefix: 'alk_Q3v9xK…', legacy: false, createdAt: now() }];
      changed([id]);
      return secret('alk_');
    },
    'Agents.RotatePasskey': () => secret('alp_'),
    'Agents.CreateProject': (name: string, description: string) => {
      if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
        throw new ApiError('invalid', `project name ${JSON.stringify(name)} must be 1-64 ASCII letters (a-z, A-Z), digits, '.', '_' or '-', starting with a letter or digit`);
      }
      const p = { id: `pj_${name}`, name, description, createdAt: now(), updatedAt: now() };
      projects.push(p);
      changed();
      return p;
    },
    'Agents.DeleteProject': (id: string, withContent: boolean) => {
      const held = projectContent[id];
      if (held && !withContent) throw new ApiError('project_not_empty', `project ${id} holds ${held}; deleting it deletes them too, with their history, messages and runs`, 'confirm that they go too, or move the work elsewhere first');
      projects.splice(projects.findIndex((p) => p.id === id), 1);
      agents.forEach((a) => (a.projects = a.projects.filter((x) => x !== id)));
      changed();
      return null;
    },
    'Agents.CreateRole': (input: RoleInput) => {
      if (roles.some((r) => r.name === input.name)) throw new ApiError('conflict', `a role named "${input.name}" exists already`);
      const r: Role = { name: input.name, description: input.description, isDefault: false, isSuperuser: input.superuser, servers: input.servers, tools: [], createdAt: now(), updatedAt: now() };
      roles.push(r);
      changed();
      return r;
    },
    'Agents.DeleteRole': (name: string) => {
      if (agents.some((a) => a.role === name)) throw new ApiError('conflict', `role ${name} is in use by agents`);
      roles.splice(roles.indexOf(role(name)), 1);
      changed();
      return null;
    },
    'Agents.Grant': (name: string, server: string) => ((role(name).servers = [...new Set([...role(name).servers, server])]), changed(), role(name)),
    'Agents.Revoke': (name: string, server: string) => ((role(name).servers = role(name).servers.filter((s) => s !== server)), changed(), role(name)),
    'Agents.SetRoleTool': (name: string, server: string, tool: string, allowed: boolean | null) => {
      const r = role(name);
      r.tools = r.tools.filter((x) => x.server !== server || x.tool !== tool);
      if (allowed != null) r.tools.push({ server, tool, allowed });
      changed();
      return r;
    },
    'Agents.SetDefaultRole': (name: string) => {
      roles.forEach((r) => (r.isDefault = r.name === name));
      changed();
      return role(name);
    },
    'Agents.Access': (id: string): ToolAccess[] => {
      const a = find(id);
      const r = role(a.role);
      return servers.filter((s) => s.config.id !== 'airlock').flatMap((s) => (s.status.tools ?? []).map((tl) => {
        const base = { server: s.config.id, tool: tl.name, exposedName: tl.exposedName };
        if (a.status !== 'active') return { ...base, allowed: false, code: 'suspended', reason: `account is ${a.status}`, hint: `resume agent '${a.name}': ${link(a, 'Status', 'status')}` };
        const perm = r.tools.find((x) => x.server === s.config.id && x.tool === tl.name);
        if (!r.isSuperuser && !(perm ? perm.allowed : r.servers.includes(s.config.id))) {
          return { ...base, allowed: false, code: 'not_subscribed', reason: `Role '${r.name}' of agent '${a.name}' has no grant for server '${s.config.id}'`, hint: `grant server '${s.config.id}' to role '${r.name}', or give agent '${a.name}' another role: ${link(a, 'Role', 'role')}` };
        }
        if (a.disabledTools.some((d) => d.server === s.config.id && d.tool === tl.name)) {
          return { ...base, allowed: false, code: 'user_disabled', reason: `Tool '${tl.name}' of server '${s.config.id}' is switched off for agent '${a.name}'`, hint: `switch it on: ${link(a, 'Tools', 'tools')}` };
        }
        return { ...base, allowed: true };
      }));
    },
    'Agents.Snippets': (token: string, purpose: string) => {
      const base = 'http://127.0.0.1:7801/mcp';
      const url = `${base}${purpose === 'chat' ? '?purpose=chat' : ''}`;
      const bridgeArgs = purpose === 'chat' ? ['--url', base, '--purpose', 'chat'] : ['--url', base];
      return [
        { client: 'Claude Code', where: 'run in a terminal', text: `claude mcp add --transport http airlock ${url} \\\n  --header "Authorization: Bearer ${token}"` },
        { client: 'Claude Desktop', where: 'claude_desktop_config.json (it starts only stdio servers: the bridge relays)', text: JSON.stringify({ mcpServers: { airlock: { command: '/usr/local/bin/airlock-bridge', args: bridgeArgs, env: { AIRLOCK_TOKEN: token } } } }, null, 2) },
        { client: 'Cursor', where: '~/.cursor/mcp.json', text: JSON.stringify({ mcpServers: { airlock: { url, headers: { Authorization: `Bearer ${token}` } } } }, null, 2) },
        { client: 'Codex CLI', where: '~/.codex/config.toml', text: `[mcp_servers.airlock]\nurl = "${url}"\nhttp_headers = { "Authorization" = "Bearer ${token}" }` },
        { client: 'Gemini CLI', where: '~/.gemini/settings.json', text: JSON.stringify({ mcpServers: { airlock: { httpUrl: url, headers: { Authorization: `Bearer ${token}` } } } }, null, 2) },
      ];
    },
    'Builtin.Get': overview,
    'Builtin.Servers': () => ['file-read', 'file-write', 'shell-exec'],
    'Builtin.Update': (s: BuiltinSettings) => {
      if (s.shellTimeoutSeconds < 1 || s.shellTimeoutSeconds > 3600) throw new ApiError('invalid', `shellTimeoutSeconds must be between 1 and 3600, got ${s.shellTimeoutSeconds}`);
      const bad = s.deny.findIndex((r) => r.includes('{') !== r.includes('}'));
      if (bad >= 0) throw new ApiError('invalid', `deny rule ${bad + 1} "${s.deny[bad]}": unbalanced braces`, 'see the rule syntax: a command name, then flags and words it must have; {a,b} for alternatives');
      settings = structuredClone(s);
      return builtinChanged();
    },
    'Builtin.AllowPath': (dir: string) => {
      if (!dir.startsWith('/')) throw new ApiError('invalid', `folder "${dir}" is not an absolute path`, 'give the whole path from /, e.g. /home/me/project');
      if (dir === '/') throw new ApiError('invalid', 'roots: / is the root of the file system; allowing it would give agents the whole machine', 'allow the project folders agents work in');
      settings.roots = [...new Set([...settings.roots, dir])];
      return builtinChanged();
    },
    'Builtin.RemovePath': (dir: string) => {
      settings.roots = settings.roots.filter((r) => r !== dir);
      return builtinChanged();
    },
    'Builtin.Classify': (command: string) => {
      if (/\brm\s+-rf\b/.test(command)) return { outcome: 'deny', findings: [{ outcome: 'deny', rule: 'rm {-r,-R,--recursive} {-f,--force}', command: 'rm -rf', reason: 'matches the deny list' }], commands: [command] };
      if (/\b(sudo|curl)\b/.test(command)) return { outcome: 'ask', findings: [{ outcome: 'ask', rule: '{sudo,su,doas,pkexec,runuser}', command, reason: 'matches the ask list' }], commands: command.split('|').map((c) => c.trim()) };
      return { outcome: 'allow', commands: [command] };
    },
  };
}
