import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import { agentView as a, role } from '../../testing/agents';
import { ApiError } from '../../api/transport';
import type { Agent, AgentView } from '../../api';
import type { AgentsTarget } from '../../route';
import AgentsPage from './AgentsPage.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

const TOKEN = 'alk_Q3v9xK7mB2pLw8ZtR4nY6cHs1dF5gJ0aE9uT2iO7eWq';
const PASSKEY = 'alp_8ZtR4nY6cHs1dF5gJ0aE9uT2iO7eWqQ3v9xK7mB2pLw';

const owner = a('ag_owner', 'owner', 'owner', undefined, { human: true, role: 'superuser' });
const lead = a('ag_lead', 'lead', 'coordinator', 'ag_owner', { role: 'readers' });
const bob = a('ag_bob', 'bob', 'worker', 'ag_lead');
const plain = (v: AgentView): Agent => {
  const { tokens: _t, ...rest } = v;
  return rest;
};

function backend(agents: AgentView[] = [owner, lead, bob]) {
  vi.mocked(fakeApi.agents.list).mockResolvedValue(agents);
  vi.mocked(fakeApi.agents.roles).mockResolvedValue([role('superuser', { isSuperuser: true }), role('default', { isDefault: true }), role('readers', { servers: ['docs'] })]);
  vi.mocked(fakeApi.agents.projects).mockResolvedValue([]);
  vi.mocked(fakeApi.agents.access).mockResolvedValue([]);
  vi.mocked(fakeApi.servers.list).mockResolvedValue([
    { config: { id: 'docs', command: 'node' }, status: { id: 'docs', transport: 'stdio', state: 'running', restarts: 0, stderrTail: [], since: '', tools: [
      { serverId: 'docs', name: 'search', exposedName: 'docs__search' }, { serverId: 'docs', name: 'delete', exposedName: 'docs__delete' },
    ] } },
  ]);
}

function renderPage(target?: AgentsTarget) {
  const { stores, context } = testStores();
  void stores.servers.load();
  return { stores, ...render(AgentsPage, { context, props: { target } }) };
}

describe('AgentsPage', () => {
  beforeEach(() => {
    resetFakeApi();
    backend();
  });

  it('shows the hierarchy as a tree, the owner at the top', async () => {
    renderPage();
    const tree = await screen.findByRole('tree', { name: 'Agent hierarchy' });
    const items = within(tree).getAllByRole('treeitem');
    expect(items.map((i) => [i.getAttribute('aria-level'), i.querySelector('.name')!.textContent])).toEqual([['1', 'owner'], ['2', 'lead'], ['3', 'bob']]);
  });

  it('lands on the agent and tab a deny hint links to', async () => {
    renderPage({ view: 'agents', id: 'ag_bob', tab: 'role' });
    const detail = await screen.findByTestId('agent-detail');
    expect(detail.getAttribute('data-agent-id')).toBe('ag_bob');
    expect(screen.getByRole('tab', { name: 'Role' }).getAttribute('aria-selected')).toBe('true');
    // bob has the role "default": its grants are what the link is about.
    expect((await screen.findByTestId('role-grants')).getAttribute('data-role')).toBe('default');
    expect((screen.getByLabelText('Grant docs to role default') as HTMLInputElement).checked).toBe(false);
  });

  it('has a Run profile tab for AI agents only, where the Run button\'s reasons link', async () => {
    renderPage({ view: 'agents', id: 'ag_bob', tab: 'run' });
    expect((await screen.findByRole('tab', { name: 'Run profile' })).getAttribute('aria-selected')).toBe('true');
    await screen.findByTestId('run-profile');
    await userEvent.click(screen.getByRole('treeitem', { name: /owner/ }));
    await waitFor(() => expect(screen.getByTestId('agent-detail').getAttribute('data-agent-id')).toBe('ag_owner'));
    await userEvent.click(screen.getByRole('tab', { name: 'Profile' }));
    expect(screen.queryByRole('tab', { name: 'Run profile' }), 'a person has no run profile').toBeNull();
  });

  it('a profile save keeps a change made elsewhere while it was being edited (found by a new-user test: it moved the agent back)', async () => {
    const { stores } = renderPage({ view: 'agents', id: 'ag_bob', tab: 'profile' });
    const form = await screen.findByRole('form', { name: 'Agent profile' });
    const name = within(form).getByLabelText('Name');
    await userEvent.clear(name);
    await userEvent.type(name, 'robert');
    const moved = { ...bob, parentId: 'ag_owner' };
    backend([owner, lead, moved]);
    await stores.agents.load(); // as agents:changed makes it
    await waitFor(() => expect(stores.agents.byId('ag_bob')?.parentId).toBe('ag_owner'));
    vi.mocked(fakeApi.agents.update).mockResolvedValue(plain({ ...moved, name: 'robert' }));
    await userEvent.click(within(form).getByRole('button', { name: /^Save/ }));
    await waitFor(() => expect(fakeApi.agents.update).toHaveBeenCalledWith('ag_bob', { name: 'robert' }));
  });

  it('grants a server to the agent\'s role from the Role tab', async () => {
    vi.mocked(fakeApi.agents.grant).mockResolvedValue(role('default', { isDefault: true, servers: ['docs'] }));
    renderPage({ view: 'agents', id: 'ag_bob', tab: 'role' });
    await userEvent.click(await screen.findByLabelText('Grant docs to role default'));
    expect(fakeApi.agents.grant).toHaveBeenCalledWith('default', 'docs');
  });

  it('withholds one tool in a role', async () => {
    vi.mocked(fakeApi.agents.setRoleTool).mockResolvedValue(role('readers', { servers: ['docs'] }));
    renderPage({ view: 'roles', id: 'readers', tab: null });
    await userEvent.selectOptions(await screen.findByLabelText('delete of docs in role readers'), 'withhold');
    expect(fakeApi.agents.setRoleTool).toHaveBeenCalledWith('readers', 'docs', 'delete', false);
  });

  it('moves through the tree with the arrow keys', async () => {
    renderPage({ view: 'agents', id: 'ag_owner', tab: null });
    const first = await screen.findByRole('treeitem', { name: /owner/ });
    first.focus();
    await userEvent.keyboard('{ArrowDown}');
    await waitFor(() => expect(screen.getByTestId('agent-detail').getAttribute('data-agent-id')).toBe('ag_lead'));
    await userEvent.keyboard('{ArrowDown}');
    await waitFor(() => expect(screen.getByTestId('agent-detail').getAttribute('data-agent-id')).toBe('ag_bob'));
    await userEvent.keyboard('{ArrowLeft}'); // to the parent
    await waitFor(() => expect(screen.getByTestId('agent-detail').getAttribute('data-agent-id')).toBe('ag_lead'));
    expect(document.activeElement?.getAttribute('data-agent-id')).toBe('ag_lead');
  });

  it('says which open tasks deleting an agent leaves unassigned, before it is deleted', async () => {
    vi.mocked(fakeApi.agents.openTasks).mockResolvedValue([
      { id: 'tsk_1', projectId: 'prj_1', title: 'Orders API', description: '', status: 'in_progress', priority: 'high', assigneeId: 'ag_bob',
        createdByAgentId: 'ag_owner', parentTaskId: '', dependsOn: [], blockedReason: '', statusChangedByAgentId: '', statusChangedAt: null,
        startedFromConversationId: '', requestedInConversationId: '', requestedByAgentId: '', result: '', summary: '',
        createdAt: '', updatedAt: '', completedAt: null },
    ]);
    renderPage({ view: 'agents', id: 'ag_bob', tab: 'status' });
    const warning = await screen.findByTestId('open-tasks-warning');
    expect(fakeApi.agents.openTasks).toHaveBeenCalledWith('ag_bob');
    expect(warning.textContent).toBe('1 open task assigned to bob (“Orders API”) will stay on the board, unassigned.');
    await userEvent.click(screen.getByRole('button', { name: 'Delete agent' }));
    expect(screen.getByRole('group', { name: 'Delete bob and unassign 1 open task?' })).toBeTruthy();
    expect(fakeApi.agents.delete).not.toHaveBeenCalled();
  });

  it('offers no suspend for the owner: it is the person at the UI', async () => {
    renderPage({ view: 'agents', id: 'ag_owner', tab: 'status' });
    expect((await screen.findByTestId('owner-status')).textContent).toContain('always active');
    expect(screen.queryByRole('button', { name: 'Suspend' })).toBeNull();
    expect(screen.queryByRole('radiogroup', { name: 'Status' })).toBeNull();
  });

  it('suspends with one click', async () => {
    vi.mocked(fakeApi.agents.suspend).mockImplementation(async () => {
      vi.mocked(fakeApi.agents.list).mockResolvedValue([owner, lead, { ...bob, status: 'suspended' }]);
      return { ...plain(bob), status: 'suspended' };
    });
    renderPage({ view: 'agents', id: 'ag_bob', tab: null });
    await userEvent.click(await screen.findByRole('button', { name: 'Suspend' }));
    expect(fakeApi.agents.suspend).toHaveBeenCalledWith('ag_bob');
    await waitFor(() => expect(screen.getByTestId('agent-status').textContent).toBe('suspended'));
    expect(screen.getByRole('button', { name: 'Resume' })).toBeTruthy();
  });

  it('shows why a tool is refused, with the hint as a link to the setting', async () => {
    vi.mocked(fakeApi.agents.access).mockResolvedValue([
      { server: 'docs', tool: 'search', exposedName: 'docs__search', allowed: true },
      { server: 'docs', tool: 'delete', exposedName: 'docs__delete', allowed: false, code: 'not_subscribed',
        reason: "Role 'default' of agent 'bob' has no grant for server 'docs'",
        hint: "grant server 'docs' to role 'default', or give agent 'bob' another role: open Airlock → Agents → bob → Role (#/agents/ag_bob?tab=role)" },
    ]);
    renderPage({ view: 'agents', id: 'ag_bob', tab: 'tools' });
    const rows = await screen.findAllByTestId('access-row');
    expect(rows.map((r) => [r.dataset.tool, r.dataset.allowed, r.dataset.code])).toEqual([['docs__search', 'true', ''], ['docs__delete', 'false', 'not_subscribed']]);
    const link = within(rows[1]).getByTestId('hint-link');
    expect(link.textContent).toBe('Agents → bob → Role');
    expect(link.getAttribute('href')).toBe('#/agents/ag_bob?tab=role');
    await userEvent.click(within(rows[0]).getByRole('switch', { name: 'docs__search for bob' }));
    expect(fakeApi.agents.setToolEnabled).toHaveBeenCalledWith('ag_bob', 'docs', 'search', false);
  });

  it('shows a new agent\'s token once, masked; Copy copies the real one; the snippets hide it too', async () => {
    const user = userEvent.setup();
    const created = a('ag_new', 'scout', 'worker', 'ag_owner');
    vi.mocked(fakeApi.agents.create).mockResolvedValue({ agent: plain(created), token: TOKEN, passkey: PASSKEY });
    vi.mocked(fakeApi.agents.snippets).mockImplementation(async (token) => [
      { client: 'Claude Code', where: 'run in a terminal', text: `claude mcp add --transport http airlock http://x/mcp --header "Authorization: Bearer ${token}"` },
      { client: 'Cursor', where: '~/.cursor/mcp.json', text: `{"headers":{"Authorization":"Bearer ${token}"}}` },
    ]);
    renderPage();
    await user.click(await screen.findByRole('button', { name: 'New agent' }));
    const dialog = screen.getByRole('dialog');
    await user.type(within(dialog).getByLabelText('Name'), 'scout');
    await user.click(within(dialog).getByRole('button', { name: 'Create agent' }));
    expect(fakeApi.agents.create).toHaveBeenCalledWith(expect.objectContaining({ name: 'scout', kind: 'worker', role: 'default', parent: 'ag_owner' }));

    expect((await screen.findByTestId('new-token')).textContent!.startsWith(TOKEN.slice(0, 10))).toBe(true);
    expect(screen.getByRole('note').textContent).toContain("You won't see them again");
    // The secrets replaced the form that had the focus: the keyboard starts at "Copy it now" (it fell to the page; found by a new-user test).
    expect(document.activeElement).toBe(screen.getByRole('note'));
    await screen.findByTestId('connect-snippet');
    for (const tab of ['Claude Code', 'Cursor']) {
      await user.click(screen.getByRole('tab', { name: tab }));
      expect(document.body.innerHTML).not.toContain(TOKEN);
      expect(document.body.innerHTML).not.toContain(PASSKEY);
    }
    await user.click(screen.getByRole('button', { name: 'Copy the agent token' }));
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe(TOKEN));
    await user.click(screen.getByRole('button', { name: 'Copy the Cursor snippet, with the token' }));
    await waitFor(async () => expect(await navigator.clipboard.readText()).toContain(`Bearer ${TOKEN}`));
    expect(fakeApi.agents.snippets).toHaveBeenCalledWith(TOKEN, 'task');
    await user.click(screen.getByRole('radio', { name: 'Chat session' }));
    await waitFor(() => expect(fakeApi.agents.snippets).toHaveBeenLastCalledWith(TOKEN, 'chat'));

    await user.click(screen.getByRole('button', { name: 'Done' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(document.body.innerHTML).not.toContain(TOKEN.slice(10, 30));
  });

  it('adds an agent under the one shown', async () => {
    vi.mocked(fakeApi.agents.create).mockResolvedValue({ agent: plain(a('ag_w', 'w', 'worker', 'ag_lead')), token: TOKEN, passkey: PASSKEY });
    renderPage({ view: 'agents', id: 'ag_lead', tab: null });
    await userEvent.click(await screen.findByRole('button', { name: 'Add agent under lead' }));
    const dialog = screen.getByRole('dialog');
    expect((within(dialog).getByLabelText('Reports to') as HTMLSelectElement).value).toBe('ag_lead');
    await userEvent.type(within(dialog).getByLabelText('Name'), 'w');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Create agent' }));
    expect(fakeApi.agents.create).toHaveBeenCalledWith(expect.objectContaining({ name: 'w', parent: 'ag_lead' }));
  });

  it('shows a refused new agent\'s reason in the form', async () => {
    const { ApiError } = await import('../../api/transport');
    vi.mocked(fakeApi.agents.create).mockRejectedValue(new ApiError('conflict', 'an agent named "bob" exists already'));
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'New agent' }));
    const dialog = screen.getByRole('dialog');
    await userEvent.type(within(dialog).getByLabelText('Name'), 'bob');
    await userEvent.click(within(dialog).getByRole('button', { name: 'Create agent' }));
    expect((await screen.findByTestId('agent-form-error')).textContent).toContain('exists already');
    expect(screen.getByRole('dialog')).toBeTruthy();
  });

  it('says what to do when only the owner and the old shared agent exist', async () => {
    backend([owner, a('ag_default', 'default', 'manager', 'ag_owner', { role: 'superuser' })]);
    renderPage();
    const intro = await screen.findByTestId('agents-intro');
    expect(intro.textContent).toContain('Give each AI agent its own identity');
    expect(within(intro).getByRole('button', { name: 'New agent' })).toBeTruthy();
  });

  it('replaces a token only after a confirmation, then shows the new one once', async () => {
    const withToken = { ...bob, tokens: [{ id: 'tk1', agentId: 'ag_bob', prefix: 'alk_AAAAAA…', legacy: false, createdAt: '' }] };
    backend([owner, lead, withToken]);
    vi.mocked(fakeApi.agents.rotateToken).mockResolvedValue(TOKEN);
    vi.mocked(fakeApi.agents.snippets).mockResolvedValue([]);
    renderPage({ view: 'agents', id: 'ag_bob', tab: 'connect' });
    expect((await screen.findByTestId('token-row')).textContent).toContain('alk_AAAAAA…');
    await userEvent.click(screen.getByRole('button', { name: 'Create a new token' }));
    expect(fakeApi.agents.rotateToken).not.toHaveBeenCalled();
    await userEvent.click(screen.getByRole('button', { name: 'Replace token' }));
    expect(fakeApi.agents.rotateToken).toHaveBeenCalledWith('ag_bob');
    expect((await screen.findByTestId('new-token')).textContent).not.toBe(TOKEN);
    await userEvent.click(screen.getByRole('button', { name: /saved it/ }));
    expect(screen.queryByTestId('new-token')).toBeNull();
  });

  it('deletes a project that holds work only once the person saw what goes with it (found by a new-user test)', async () => {
    backend();
    vi.mocked(fakeApi.agents.projects).mockResolvedValue([{ id: 'pj_1', name: 'apollo', description: '', createdAt: '', updatedAt: '' }]);
    vi.mocked(fakeApi.agents.deleteProject).mockImplementation(async (_id: string, withContent: boolean) => {
      if (!withContent) throw new ApiError('project_not_empty', 'project apollo holds 2 tasks and 1 conversation; deleting it deletes them too, with their history, messages and runs');
    });
    renderPage({ view: 'projects', id: null, tab: null });
    await userEvent.click(await screen.findByRole('button', { name: 'Delete' }));
    await userEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const holds = await screen.findByTestId('project-holds');
    expect(holds.textContent).toContain('holds 2 tasks and 1 conversation');
    expect(document.activeElement).toBe(within(holds).getByRole('button', { name: 'Keep it' }));
    expect(fakeApi.agents.deleteProject).toHaveBeenCalledWith('pj_1', false);
    await userEvent.click(within(holds).getByRole('button', { name: 'Delete it all' }));
    expect(fakeApi.agents.deleteProject).toHaveBeenLastCalledWith('pj_1', true);
  });

  it('takes an agent off a project where it holds open tasks only once the person saw they become unassigned (found by a new-user test)', async () => {
    const onApollo = { ...bob, projects: ['pj_1'] };
    backend([owner, lead, onApollo]);
    vi.mocked(fakeApi.agents.projects).mockResolvedValue([
      { id: 'pj_1', name: 'apollo', description: '', createdAt: '', updatedAt: '' },
      { id: 'pj_2', name: 'gemini', description: '', createdAt: '', updatedAt: '' },
    ]);
    const task = (id: string, projectId: string, title: string, status: string) => ({ id, projectId, title, description: '', status, priority: 'high', assigneeId: 'ag_bob',
      createdByAgentId: 'ag_owner', parentTaskId: '', dependsOn: [], blockedReason: '', statusChangedByAgentId: '', statusChangedAt: null,
      startedFromConversationId: '', requestedInConversationId: '', requestedByAgentId: '', result: '', summary: '',
      createdAt: '', updatedAt: '', completedAt: null });
    vi.mocked(fakeApi.agents.openTasks).mockResolvedValue([task('tsk_1', 'pj_1', 'Orders API', 'in_progress'), task('tsk_2', 'pj_2', 'Elsewhere', 'todo')]);
    vi.mocked(fakeApi.agents.unassign).mockResolvedValue(plain({ ...onApollo, projects: [] }));
    renderPage({ view: 'agents', id: 'ag_bob', tab: 'projects' });
    const box = await screen.findByRole('checkbox', { name: /apollo/ });
    await userEvent.click(box);
    const ask = await screen.findByRole('alertdialog', { name: 'Take bob off apollo?' });
    expect(ask.textContent).toContain('bob holds 1 open task in this project (“Orders API”)');
    expect(ask.textContent).toContain('the one in progress goes back to todo');
    expect(ask.textContent).not.toContain('Elsewhere');
    expect(fakeApi.agents.unassign).not.toHaveBeenCalled();
    expect(document.activeElement).toBe(within(ask).getByRole('button', { name: 'Keep bob on it' }));
    await userEvent.click(within(ask).getByRole('button', { name: 'Keep bob on it' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect((screen.getByRole('checkbox', { name: /apollo/ }) as HTMLInputElement).checked).toBe(true);
    expect(fakeApi.agents.unassign).not.toHaveBeenCalled();

    await userEvent.click(screen.getByRole('checkbox', { name: /apollo/ }));
    await userEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Take off and unassign' }));
    expect(fakeApi.agents.unassign).toHaveBeenCalledWith('ag_bob', 'pj_1');
    expect((await screen.findByRole('status')).textContent).toContain('1 task bob held in apollo is unassigned now');
  });

  it('offers no worker as a parent, and says why a chosen parent cannot be (found by a new-user test: a manager went under a worker)', async () => {
    const mgr = a('ag_mgr', 'mgr', 'manager', 'ag_owner');
    backend([owner, lead, bob, mgr]);
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'New agent' }));
    const dialog = screen.getByRole('dialog');
    const parent = within(dialog).getByLabelText('Reports to') as HTMLSelectElement;
    const option = (name: string) => [...parent.options].find((o) => o.textContent!.includes(name))!;
    expect(option('bob').disabled, 'a worker has no one under it').toBe(true);
    expect(option('mgr').disabled).toBe(false);
    await userEvent.selectOptions(parent, 'ag_mgr');
    await userEvent.selectOptions(within(dialog).getByLabelText('Kind'), 'coordinator');
    expect(option('mgr').disabled).toBe(true);
    expect(within(dialog).getByRole('alert').textContent).toBe('a coordinator cannot report to a manager');
  });
});
