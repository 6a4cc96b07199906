// The app's locations, kept in the URL hash so that a link can open a
// screen at the right place. The backend's deny hints link this way
// (authz's uiLink: "#/agents/<agent id>?tab=<tab>"), so an agent's refusal
// leads straight to the setting that would change it.

export type Route = 'approvals' | 'rules' | 'servers' | 'builtin' | 'agents' | 'board' | 'chat' | 'activity';
export const ROUTES: Route[] = ['approvals', 'rules', 'servers', 'builtin', 'agents', 'board', 'chat', 'activity'];

/** The tabs of one agent on the Agents screen; the backend's hints name the first five. */
export type AgentTab = 'profile' | 'status' | 'role' | 'tools' | 'projects' | 'connect';
export const AGENT_TABS: AgentTab[] = ['profile', 'status', 'role', 'tools', 'projects', 'connect'];

/** What the Agents screen shows: the hierarchy of agents, the roles, or the projects. */
export type AgentsView = 'agents' | 'roles' | 'projects';

/** Where the Agents screen should land (from a link); null parts leave the screen's own choice. */
export interface AgentsTarget {
  view: AgentsView;
  /** An agent id (agents view) or a role name (roles view). */
  id: string | null;
  tab: AgentTab | null;
}

/** What the Board screen should show: "#/board/<project>/<task>?agent=<id>". */
export interface BoardTarget {
  /** A project id (or name); null leaves the screen's own choice. */
  project: string | null;
  /** The task whose detail is open. */
  task: string | null;
  /** The agent filter: an agent id, "none" for unassigned tasks, null for all. */
  agent: string | null;
}

/** What the Chat screen should show: "#/chat/<conversation>". */
export interface ChatTarget {
  conversation: string | null;
}

export interface Place {
  route: Route;
  /** Set for the agents route. */
  agents?: AgentsTarget;
  /** Set for the board route. */
  board?: BoardTarget;
  /** Set for the chat route. */
  chat?: ChatTarget;
}

/**
 * Reads a hash such as "#/agents/ag_1?tab=role", "#/agents/roles/readers"
 * or "#/rules". Anything unknown is the Servers screen, the app's start.
 */
export function parseHash(hash: string): Place {
  const raw = hash.replace(/^#\/?/, '');
  const q = raw.indexOf('?');
  const path = (q < 0 ? raw : raw.slice(0, q)).split('/').filter(Boolean).map(safeDecode);
  const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
  const route = path[0] as Route;
  if (!ROUTES.includes(route)) return { route: 'servers' };
  if (route === 'board') return { route, board: { project: path[1] ?? null, task: path[2] ?? null, agent: params.get('agent') || null } };
  if (route === 'chat') return { route, chat: { conversation: path[1] ?? null } };
  if (route !== 'agents') return { route };
  if (path[1] === 'roles' || path[1] === 'projects') {
    return { route, agents: { view: path[1], id: path[2] ?? null, tab: null } };
  }
  const tab = params.get('tab') as AgentTab | null;
  return { route, agents: { view: 'agents', id: path[1] ?? null, tab: tab && AGENT_TABS.includes(tab) ? tab : null } };
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The link to one agent's tab, the same shape the backend's hints use. */
export function agentHref(id: string, tab?: AgentTab): string {
  return `#/agents/${encodeURIComponent(id)}${tab ? `?tab=${tab}` : ''}`;
}

/** The link to the roles view, at one role. */
export function roleHref(name?: string): string {
  return name ? `#/agents/roles/${encodeURIComponent(name)}` : '#/agents/roles';
}

/** The link to a project's board, at one task's detail, with an agent filter. */
export function boardHref(project?: string | null, task?: string | null, agent?: string | null): string {
  let h = '#/board';
  if (project) h += `/${encodeURIComponent(project)}`;
  if (project && task) h += `/${encodeURIComponent(task)}`;
  return agent ? `${h}?agent=${encodeURIComponent(agent)}` : h;
}

/** The link to a conversation on the Chat screen. */
export function chatHref(conversation?: string | null): string {
  return conversation ? `#/chat/${encodeURIComponent(conversation)}` : '#/chat';
}

/** A piece of hint text: plain, or an in-app link found in it. */
export type HintPart = { text: string; href?: undefined } | { text: string; href: string };

const LINK = String.raw`#\/(?:agents|rules|servers|builtin|activity|approvals|board|chat)(?:\/[A-Za-z0-9_.\-%]+)*(?:\?[A-Za-z0-9_=&.\-%]+)?`;

/**
 * Splits a hint into text and in-app links, so the screens can make the
 * link clickable. The backend words a link for an agent, who cannot click:
 * "open Airlock → Agents → bob → Role (#/agents/ag_1?tab=role)"; inside
 * Airlock that becomes one link reading "Agents → bob → Role". A bare
 * "#/…" link is kept as it is.
 */
export function hintParts(hint: string): HintPart[] {
  const out: HintPart[] = [];
  const re = new RegExp(String.raw`open Airlock → ([^()]+?) \((${LINK})\)|${LINK}`, 'g');
  let last = 0;
  for (let m = re.exec(hint); m; m = re.exec(hint)) {
    if (m.index > last) out.push({ text: hint.slice(last, m.index) });
    out.push(m[1] ? { text: m[1], href: m[2] } : { text: m[0], href: m[0] });
    last = m.index + m[0].length;
  }
  if (last < hint.length) out.push({ text: hint.slice(last) });
  return out;
}
