import { api } from '../api';
import type { Agent, AgentInput, AgentUpdate, AgentView, CreatedAgent, Project, Role, RoleInput, Snippet, Task, ToolAccess } from '../api';
import { on, onResync } from '../events';
import { errorText } from './util';

/** Agent kinds, top of the hierarchy first (authz.Kinds). */
export type AgentKind = 'owner' | 'coordinator' | 'manager' | 'worker';
export const AGENT_KINDS: AgentKind[] = ['owner', 'coordinator', 'manager', 'worker'];

/**
 * Why an agent of kind may not report to parent, or null (authz.CanReportTo):
 * the hierarchy goes owner → coordinators → managers → workers, and a worker
 * has nobody under it.
 */
export function cannotReportTo(kind: string, parent: { name: string; kind: string }): string | null {
  if (parent.kind === 'worker') return `${parent.name} is a worker: a worker has no agents under it`;
  const rank = (k: string) => AGENT_KINDS.indexOf(k as AgentKind);
  if (rank(parent.kind) > rank(kind)) return `a ${kind} cannot report to a ${parent.kind}`;
  return null;
}

/** Agent statuses (authz.Statuses): only an active agent may do anything. */
export type AgentStatus = 'active' | 'suspended' | 'disabled';
export const AGENT_STATUSES: AgentStatus[] = ['active', 'suspended', 'disabled'];

/** One row of the hierarchy: an agent and how deep it sits under the owner. */
export interface TreeRow {
  agent: AgentView;
  depth: number;
  /** The agent has agents under it. */
  parent: boolean;
}

/**
 * The agents in their hierarchy (owner → coordinators/managers → workers),
 * the roles with their grants, and the projects. Every change is made
 * through the backend and then reloaded; agents:changed (another window,
 * the CLI, a change of grants) reloads too.
 */
export class AgentsStore {
  agents = $state<AgentView[]>([]);
  roles = $state<Role[]>([]);
  projects = $state<Project[]>([]);
  loading = $state(false);
  loaded = $state(false);
  error = $state<string | null>(null);
  /**
   * Counts changes the backend told of (and loads), so views of what the
   * backend derives from agents (an agent's tool access) know to refetch.
   */
  version = $state(0);

  private seq = 0;

  async load(): Promise<void> {
    const seq = ++this.seq;
    this.loading = true;
    try {
      const [agents, roles, projects] = await Promise.all([api.agents.list(), api.agents.roles(), api.agents.projects()]);
      if (seq !== this.seq) return; // a newer load (after a newer change) won
      this.agents = agents ?? [];
      this.roles = roles ?? [];
      this.projects = projects ?? [];
      this.error = null;
      this.version++;
    } catch (err) {
      if (seq === this.seq) this.error = errorText(err);
    } finally {
      if (seq === this.seq) {
        this.loading = false;
        this.loaded = true;
      }
    }
  }

  /** Subscribes to live updates; returns the unsubscribe function. */
  connect(): () => void {
    const offs = [
      on('agents:changed', () => void this.load()),
      // A server's tools changed: what an agent may call is listed per tool.
      on('server:status', () => this.version++),
      onResync(() => void this.load()),
    ];
    return () => offs.forEach((off) => off());
  }

  byId(id: string | null | undefined): AgentView | undefined {
    return id ? this.agents.find((a) => a.id === id) : undefined;
  }

  role(name: string | null | undefined): Role | undefined {
    return name ? this.roles.find((r) => r.name === name) : undefined;
  }

  project(id: string): Project | undefined {
    return this.projects.find((p) => p.id === id);
  }

  get defaultRole(): Role | undefined {
    return this.roles.find((r) => r.isDefault);
  }

  /** The agents that have role name. */
  withRole(name: string): AgentView[] {
    return this.agents.filter((a) => a.role === name);
  }

  /** The agents assigned to project id. */
  onProject(id: string): AgentView[] {
    return this.agents.filter((a) => a.projects.includes(id));
  }

  children(id: string): AgentView[] {
    return this.agents.filter((a) => a.parentId === id);
  }

  /** id and every agent below it: none of them can become its parent. */
  subtree(id: string): Set<string> {
    const out = new Set<string>([id]);
    for (let grew = true; grew; ) {
      grew = false;
      for (const a of this.agents) {
        if (a.parentId && out.has(a.parentId) && !out.has(a.id)) {
          out.add(a.id);
          grew = true;
        }
      }
    }
    return out;
  }

  /**
   * The hierarchy in display order: each agent right after its parent,
   * siblings by kind (coordinators first) then name. Agents whose parent is
   * missing are shown at the top level rather than lost.
   */
  get tree(): TreeRow[] {
    const ids = new Set(this.agents.map((a) => a.id));
    const rank = (a: AgentView) => {
      const i = AGENT_KINDS.indexOf(a.kind as AgentKind);
      return i < 0 ? AGENT_KINDS.length : i;
    };
    const order = (a: AgentView, b: AgentView) => rank(a) - rank(b) || a.name.localeCompare(b.name);
    const byParent = new Map<string, AgentView[]>();
    for (const a of this.agents) {
      const p = a.parentId && ids.has(a.parentId) && a.parentId !== a.id ? a.parentId : '';
      byParent.set(p, [...(byParent.get(p) ?? []), a]);
    }
    const out: TreeRow[] = [];
    const seen = new Set<string>();
    const walk = (parent: string, depth: number) => {
      for (const a of (byParent.get(parent) ?? []).sort(order)) {
        if (seen.has(a.id)) continue;
        seen.add(a.id);
        out.push({ agent: a, depth, parent: (byParent.get(a.id)?.length ?? 0) > 0 });
        walk(a.id, depth + 1);
      }
    };
    walk('', 0);
    // A stored cycle would hide its agents from the walk: list them anyway.
    for (const a of this.agents) if (!seen.has(a.id)) out.push({ agent: a, depth: 0, parent: false });
    return out;
  }

  async create(input: AgentInput): Promise<CreatedAgent> {
    const created = await api.agents.create(input);
    this.upsert(created.agent);
    await this.load();
    return created;
  }

  async update(id: string, up: AgentUpdate): Promise<Agent> {
    return this.changed(await api.agents.update(id, up));
  }

  async remove(id: string): Promise<void> {
    await api.agents.delete(id);
    this.agents = this.agents.filter((a) => a.id !== id);
    await this.load();
  }

  /** Sets an agent's status; suspending cuts it off at its next request. */
  async setStatus(id: string, status: AgentStatus): Promise<Agent> {
    if (status === 'suspended') return this.changed(await api.agents.suspend(id));
    if (status === 'active') return this.changed(await api.agents.resume(id));
    return this.changed(await api.agents.update(id, { status }));
  }

  async setCompact(id: string, on: boolean): Promise<Agent> {
    return this.changed(await api.agents.setCompact(id, on));
  }

  async setToolEnabled(id: string, server: string, tool: string, enabled: boolean): Promise<Agent> {
    return this.changed(await api.agents.setToolEnabled(id, server, tool, enabled));
  }

  async setProject(agent: string, project: string, on: boolean): Promise<Agent> {
    return this.changed(await (on ? api.agents.assign(agent, project) : api.agents.unassign(agent, project)));
  }

  /** A new connection token, returned this once; the agent's previous one stops working. */
  async rotateToken(id: string): Promise<string> {
    const token = await api.agents.rotateToken(id);
    await this.load();
    return token;
  }

  /** A new passkey (for authenticate), returned this once. */
  rotatePasskey(id: string): Promise<string> {
    return api.agents.rotatePasskey(id);
  }

  snippets(token: string, purpose: 'task' | 'chat'): Promise<Snippet[]> {
    return api.agents.snippets(token, purpose);
  }

  /** The open tasks assigned to the agent (deleting it leaves them unassigned). */
  openTasks(id: string): Promise<Task[]> {
    return api.agents.openTasks(id);
  }

  /** Whether the agent may call each tool now, and why not: the gate's own decision. */
  access(id: string): Promise<ToolAccess[]> {
    return api.agents.access(id);
  }

  async createProject(name: string, description: string): Promise<Project> {
    const p = await api.agents.createProject(name, description);
    await this.load();
    return p;
  }

  /** Deletes a project; one holding tasks or conversations only withContent (else the error says what it holds). */
  async deleteProject(id: string, withContent = false): Promise<void> {
    await api.agents.deleteProject(id, withContent);
    await this.load();
  }

  async createRole(input: RoleInput): Promise<Role> {
    const r = await api.agents.createRole(input);
    await this.load();
    return r;
  }

  async deleteRole(name: string): Promise<void> {
    await api.agents.deleteRole(name);
    await this.load();
  }

  async setGrant(role: string, server: string, granted: boolean): Promise<Role> {
    return this.roleChanged(await (granted ? api.agents.grant(role, server) : api.agents.revoke(role, server)));
  }

  /** Allows (true) or withholds (false) one tool in a role; null follows the server's grant again. */
  async setRoleTool(role: string, server: string, tool: string, allowed: boolean | null): Promise<Role> {
    return this.roleChanged(await api.agents.setRoleTool(role, server, tool, allowed));
  }

  async setDefaultRole(name: string): Promise<Role> {
    return this.roleChanged(await api.agents.setDefaultRole(name));
  }

  /** Shows the backend's answer at once, then reloads (tokens, other agents). */
  private async changed(a: Agent): Promise<Agent> {
    this.upsert(a);
    this.version++;
    await this.load();
    return a;
  }

  private async roleChanged(r: Role): Promise<Role> {
    const i = this.roles.findIndex((x) => x.name === r.name);
    if (i >= 0) this.roles[i] = r;
    this.version++;
    await this.load();
    return r;
  }

  private upsert(a: Agent): void {
    const i = this.agents.findIndex((x) => x.id === a.id);
    if (i >= 0) this.agents[i] = { ...a, tokens: this.agents[i].tokens };
    else this.agents = [...this.agents, { ...a, tokens: [] }];
  }
}
