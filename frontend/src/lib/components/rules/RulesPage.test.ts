import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { emit, fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import type { Rule } from '../../api';
import { ApiError } from '../../api/transport';
import RulesPage from './RulesPage.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

const t = '2026-01-01T00:00:00Z';
function rule(over: Partial<Rule>): Rule {
  return {
    id: 'x', kind: 'tool', serverId: null, toolName: null, toolPattern: null, autoApprove: false, priority: 0, conditions: [],
    agentId: null, sessionId: null, expiresAt: null, createdAt: t, updatedAt: t, ...over,
  };
}

// In evaluation order, as Rules.List returns them: tool rules, then prompt rules, then resource rules.
const rules = [
  rule({ id: 'r-read', serverId: 'filesystem', toolPattern: 'read_*', autoApprove: true, priority: 10 }),
  rule({ id: 'r-scoped', serverId: 'filesystem', toolName: 'write_file', priority: 5, agentId: 'claude-code', conditions: [{ path: '$.path', op: 'inside', value: '/work' }] }),
  rule({ id: 'r-dead', serverId: 'filesystem', toolName: 'read_file', priority: 1 }),
  rule({ id: 'r-global', priority: 0 }),
  rule({ id: 'default-prompts', kind: 'prompt', autoApprove: true, priority: -1000 }),
  rule({ id: 'r-ssh', kind: 'resource', serverId: 'filesystem', toolPattern: 'file:///home/me/.ssh/*', priority: 0 }),
  rule({ id: 'default-resources', kind: 'resource', autoApprove: true, priority: -1000 }),
  rule({ id: 'default-sampling', kind: 'sampling', autoApprove: true }),
];

function renderPage() {
  const { context } = testStores();
  render(RulesPage, { context });
  return screen.findAllByTestId('rule-row');
}

describe('RulesPage (ToolPermissionSettings)', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.rules.list).mockResolvedValue(rules);
    vi.mocked(fakeApi.servers.list).mockResolvedValue([
      { config: { id: 'filesystem', command: 'node' }, status: { id: 'filesystem', transport: 'stdio', state: 'running', restarts: 0, stderrTail: [], since: '', tools: [] } },
    ]);
    vi.mocked(fakeApi.rules.shadowed).mockResolvedValue([
      { ruleId: 'r-dead', byRuleId: 'r-read', why: 'rule #1 [r-read] (priority 10, server filesystem, pattern read_*) comes first and matches every call this rule matches' },
    ]);
  });

  it('shows a rejected rules file as soon as the page loads', async () => {
    vi.mocked(fakeApi.rules.state).mockResolvedValue({ version: 4, fileError: 'rules.json: invalid character at line 3' });
    const { context } = testStores();
    render(RulesPage, { context });
    expect(await screen.findByText(/invalid character at line 3/)).toBeTruthy();
  });

  it('lists rules in evaluation order with their badges', async () => {
    const rows = await renderPage();
    expect(rows.map((r) => r.dataset.ruleId)).toEqual(rules.map((r) => r.id));
    const first = within(rows[0]);
    expect(first.getByText('auto-approve ON')).toBeTruthy();
    expect(first.getByText('priority 10')).toBeTruthy();
    expect(first.getByText('server: filesystem')).toBeTruthy();
    expect(first.getByText('pattern: read_*')).toBeTruthy();
    const second = within(rows[1]);
    expect(second.getByText('tool: write_file')).toBeTruthy();
    expect(second.getByText('agent: claude-code')).toBeTruthy();
    expect(second.getByText('$.path inside /work')).toBeTruthy();
    expect(within(rows[3]).getByText('global — every tool')).toBeTruthy();
    expect(within(rows[5]).getByText('uri pattern: file:///home/me/.ssh/*')).toBeTruthy();
    expect(screen.getByTestId('evaluation-order').textContent!.replace(/\s+/g, ' ')).toContain('exact tool name > pattern > server-only > global');
  });

  it('flags a rule naming a server nobody configured: it matches nothing (found by a new-user test)', async () => {
    vi.mocked(fakeApi.rules.list).mockResolvedValue([rule({ id: 'r-typo', serverId: 'everythin', autoApprove: true }), rule({ id: 'r-own', serverId: 'shell-exec' })]);
    const rows = await renderPage();
    const flag = await within(rows[0]).findByTestId('rule-unknown-server');
    expect(flag.textContent).toBe('server: everythin — not configured');
    expect(within(rows[1]).queryByTestId('rule-unknown-server')).toBeNull(); // Airlock's own servers are always there
  });

  it('flags a rule naming an agent nobody has (a rules.json edit): it matches nothing (found by a new-user test)', async () => {
    vi.mocked(fakeApi.rules.list).mockResolvedValue([rule({ id: 'r-ghost', agentId: 'nobody-here', autoApprove: true })]);
    vi.mocked(fakeApi.agents.list).mockResolvedValue([]);
    vi.mocked(fakeApi.agents.roles).mockResolvedValue([]);
    vi.mocked(fakeApi.agents.projects).mockResolvedValue([]);
    const { context, stores } = testStores();
    await stores.agents.load();
    render(RulesPage, { context });
    expect((await screen.findByTestId('rule-unknown-agent')).textContent).toBe('agent: nobody-here — no such agent');
  });

  it('numbers every rule by its place in evaluation order, across kinds, as explanations name them', async () => {
    const rows = await renderPage();
    expect(rows.map((r) => within(r).getByTestId('rule-position').textContent)).toEqual(['#1', '#2', '#3', '#4', '#5', '#6', '#7', '#8']);
    // The shadow warning names the rule the way the list numbers it.
    expect(within(rows[2]).getByTestId('rule-shadowed').textContent).toContain('never fires — rule #1 decides first');
    expect(within(rows[2]).getByTestId('rule-shadowed').getAttribute('title')).toContain('rule #1 [r-read]');
  });

  it('shows the kind of each rule and filters by kind, keeping the numbers', async () => {
    const rows = await renderPage();
    expect(rows.map((r) => within(r).getByTestId('rule-kind').textContent)).toEqual([
      'tool calls', 'tool calls', 'tool calls', 'tool calls', 'prompts', 'resource reads', 'resource reads', 'sampling',
    ]);
    expect(screen.getAllByRole('heading', { level: 3 }).map((h) => h.textContent)).toEqual(['Tool calls', 'Prompts', 'Resource reads', 'Sampling']);
    expect(within(rows[7]).getByText('global — every sampling request')).toBeTruthy();
    expect(within(rows[4]).getByText('global — every prompt')).toBeTruthy();
    expect(within(rows[4]).getByText('default')).toBeTruthy();
    await userEvent.click(screen.getByRole('button', { name: /^Resource reads/ }));
    const shown = screen.getAllByTestId('rule-row');
    expect(shown.map((r) => r.dataset.ruleId)).toEqual(['r-ssh', 'default-resources']);
    expect(shown.map((r) => within(r).getByTestId('rule-position').textContent)).toEqual(['#6', '#7']);
  });

  it('says what to do when there are no tool rules', async () => {
    vi.mocked(fakeApi.rules.list).mockResolvedValue(rules.filter((r) => r.id.startsWith('default-')));
    vi.mocked(fakeApi.rules.shadowed).mockResolvedValue([]);
    await renderPage();
    expect(within(screen.getByTestId('rule-group-tool')).getByText(/No tool rules yet — every tool call asks you/)).toBeTruthy();
  });

  it('rejects a non-integer priority next to the field without calling the backend', async () => {
    await renderPage();
    await userEvent.click(screen.getByRole('button', { name: 'New rule' }));
    const form = screen.getByRole('form', { name: 'Create rule' });
    // The form takes the focus (it was left on the page; found by a new-user test).
    expect(document.activeElement).toBe(within(form).getByLabelText('Server id'));
    const prio = within(form).getByLabelText('Priority');
    await userEvent.clear(prio);
    await userEvent.type(prio, '1.5');
    await userEvent.click(within(form).getByRole('button', { name: 'Create rule' }));
    expect(within(form).getByRole('alert').textContent).toMatch(/whole number/);
    expect(prio.getAttribute('aria-invalid')).toBe('true');
    expect(fakeApi.rules.create).not.toHaveBeenCalled();
  });

  it('creates a rule with the typed fields', async () => {
    vi.mocked(fakeApi.rules.create).mockResolvedValue(rule({ id: 'new' }));
    await renderPage();
    await userEvent.click(screen.getByRole('button', { name: 'New rule' }));
    const form = within(screen.getByRole('form', { name: 'Create rule' }));
    await userEvent.type(form.getByLabelText('Server id'), 'everything');
    await userEvent.type(form.getByLabelText(/Tool name/), 'echo');
    await userEvent.clear(form.getByLabelText('Priority'));
    await userEvent.type(form.getByLabelText('Priority'), '-3');
    await userEvent.click(form.getByLabelText('Auto-approve'));
    await userEvent.click(form.getByRole('button', { name: 'Create rule' }));
    expect(fakeApi.rules.create).toHaveBeenCalledWith({
      kind: 'tool', serverId: 'everything', toolName: 'echo', toolPattern: null, autoApprove: true, priority: -3,
      conditions: [], agentId: null, sessionId: null, expiresAt: null,
    });
  });

  it('creates a resource rule whose name fields are URIs', async () => {
    vi.mocked(fakeApi.rules.create).mockResolvedValue(rule({ id: 'new', kind: 'resource' }));
    await renderPage();
    await userEvent.click(screen.getByRole('button', { name: 'New rule' }));
    const form = within(screen.getByRole('form', { name: 'Create rule' }));
    await userEvent.click(form.getByLabelText('Resource reads'));
    expect(form.queryByLabelText(/Tool name/)).toBeNull();
    await userEvent.type(form.getByLabelText(/URI pattern/), 'file:///home/me/projects/*');
    await userEvent.click(form.getByLabelText('Auto-approve'));
    await userEvent.click(form.getByRole('button', { name: 'Create rule' }));
    expect(fakeApi.rules.create).toHaveBeenCalledWith(expect.objectContaining({
      kind: 'resource', toolName: null, toolPattern: 'file:///home/me/projects/*', autoApprove: true,
    }));
  });

  it("marks the value field, not the path, of a condition whose regex Airlock refuses (found by a new-user test)", async () => {
    // Airlock checks the regex (Go's RE2), not the browser: (?i) is fine
    // there, look-ahead is not.
    vi.mocked(fakeApi.rules.create).mockRejectedValueOnce(
      new ApiError('invalid', 'invalid regex "(?=x)foo": error parsing regexp: invalid or unsupported Perl syntax: `(?=`'),
    );
    await renderPage();
    await userEvent.click(screen.getByRole('button', { name: 'New rule' }));
    const form = within(screen.getByRole('form', { name: 'Create rule' }));
    await userEvent.click(form.getByRole('button', { name: '+ Add condition' }));
    await userEvent.type(form.getByLabelText('Condition 1 JSON path'), '$.message');
    await userEvent.selectOptions(form.getByLabelText('Condition 1 test'), 'regex');
    await userEvent.type(form.getByLabelText('Condition 1 value'), '(?=x)foo');
    await userEvent.click(form.getByRole('button', { name: 'Create rule' }));
    await waitFor(() => expect(form.getByText(/Airlock cannot use this regular expression .*invalid or unsupported Perl syntax/)).toBeTruthy());
    expect(form.getByLabelText('Condition 1 value').getAttribute('aria-invalid')).toBe('true');
    expect(form.getByLabelText('Condition 1 JSON path').getAttribute('aria-invalid')).toBe('false');
    // A regex the browser would refuse but Go takes goes to Airlock.
    await userEvent.clear(form.getByLabelText('Condition 1 value'));
    await userEvent.type(form.getByLabelText('Condition 1 value'), '(?i)^hello');
    vi.mocked(fakeApi.rules.create).mockResolvedValueOnce(rule({ id: 'rx' }));
    await userEvent.click(form.getByRole('button', { name: 'Create rule' }));
    await waitFor(() => expect(fakeApi.rules.create).toHaveBeenLastCalledWith(expect.objectContaining({
      conditions: [{ path: '$.message', op: 'regex', value: '(?i)^hello' }],
    })));
  });

  it('a sampling rule has no name fields: it matches by the server that asks', async () => {
    vi.mocked(fakeApi.rules.create).mockResolvedValue(rule({ id: 'new', kind: 'sampling' }));
    await renderPage();
    await userEvent.click(screen.getByRole('button', { name: 'New rule' }));
    const form = within(screen.getByRole('form', { name: 'Create rule' }));
    await userEvent.type(form.getByLabelText(/Tool name/), 'leftover');
    await userEvent.click(form.getByLabelText('Sampling'));
    expect(form.queryByLabelText(/name/i)).toBeNull();
    expect(form.queryByLabelText(/pattern/i)).toBeNull();
    await userEvent.type(form.getByLabelText('Server id'), 'everything');
    await userEvent.click(form.getByRole('button', { name: 'Create rule' }));
    expect(fakeApi.rules.create).toHaveBeenCalledWith(expect.objectContaining({ kind: 'sampling', serverId: 'everything', toolName: null, toolPattern: null }));
  });

  it('shows Rules.Lint warnings while the rule is written', async () => {
    vi.mocked(fakeApi.rules.lint).mockImplementation(async (input) => ({
      input,
      warnings: input.toolName === 'everything__echo'
        ? ['"everything__echo" looks like a name agents see (server__tool); a rule names the tool as its server does, with the server in its own field']
        : [],
    }));
    await renderPage();
    await userEvent.click(screen.getByRole('button', { name: 'New rule' }));
    const form = within(screen.getByRole('form', { name: 'Create rule' }));
    expect(form.queryByTestId('rule-lint')).toBeNull();
    await userEvent.type(form.getByLabelText(/Tool name/), 'everything__echo');
    expect((await form.findByTestId('rule-lint')).textContent).toContain('looks like a name agents see');
    expect(fakeApi.rules.lint).toHaveBeenLastCalledWith(expect.objectContaining({ kind: 'tool', toolName: 'everything__echo' }));
    await userEvent.clear(form.getByLabelText(/Tool name/));
    await userEvent.type(form.getByLabelText(/Tool name/), 'echo');
    await waitFor(() => expect(form.queryByTestId('rule-lint')).toBeNull());
  });

  it('the test panel shows the decision, the fired rule by number and why rules above did not match', async () => {
    vi.mocked(fakeApi.rules.test).mockResolvedValue({
      decision: { outcome: 'ask', ruleId: 'r-global', ruleSetVersion: 4, by: 'rules', reason: 'rule #4 [r-global] (priority 0, global) asks' },
      fired: rules[3],
      skipped: [
        { rule: rules[0], why: 'server is everything, the rule wants filesystem' },
        { rule: rules[1], why: 'tool echo is not write_file' },
      ],
    });
    await renderPage();
    await userEvent.type(screen.getByLabelText('Server'), 'everything');
    await userEvent.type(screen.getByLabelText('Tool'), 'echo');
    const args = screen.getByLabelText('Arguments (JSON)');
    await userEvent.clear(args);
    await userEvent.type(args, '{{"message":"hi"}');
    await userEvent.click(screen.getByRole('button', { name: 'Test' }));
    expect(fakeApi.rules.test).toHaveBeenCalledWith({ kind: 'tools/call', serverId: 'everything', toolName: 'echo', arguments: '{"message":"hi"}', agentId: undefined, sessionId: undefined });
    const result = within(await screen.findByTestId('test-result'));
    expect(result.getByText('Asks for approval')).toBeTruthy();
    expect(result.getByText('rule #4 [r-global] (priority 0, global) asks')).toBeTruthy();
    expect(result.getByTestId('test-fired-position').textContent).toBe('#4');
    expect(result.getByTestId('test-fired').textContent).toBe('r-global');
    expect(result.getByText(/server is everything, the rule wants filesystem/)).toBeTruthy();
    expect(result.getByText(/tool echo is not write_file/)).toBeTruthy();
  });

  it('the test panel takes a tool as agents see it, and drops a result the inputs or the rules no longer match (found by a new-user test)', async () => {
    vi.mocked(fakeApi.rules.test).mockResolvedValue({
      decision: { outcome: 'allow', ruleId: 'r-read', reason: 'rule #1 [r-read] auto-approves' }, fired: rules[0], skipped: [],
    });
    const { context, stores } = testStores();
    render(RulesPage, { context });
    await screen.findAllByTestId('rule-row');
    await userEvent.type(screen.getByLabelText('Tool'), 'filesystem__read_file');
    await userEvent.click(screen.getByRole('button', { name: 'Test' }));
    expect(fakeApi.rules.test).toHaveBeenCalledWith(expect.objectContaining({ serverId: 'filesystem', toolName: 'read_file' }));
    await screen.findByTestId('test-result');
    stores.rules.version = 99; // the rules changed (a rules.json edit, another window)
    await waitFor(() => expect(screen.queryByTestId('test-result')).toBeNull());
    await userEvent.click(screen.getByRole('button', { name: 'Test' }));
    await screen.findByTestId('test-result');
    await userEvent.type(screen.getByLabelText('Agent optional'), 'bob');
    expect(screen.queryByTestId('test-result')).toBeNull();
  });

  it('the test panel tests a resource read by URI', async () => {
    vi.mocked(fakeApi.rules.test).mockResolvedValue({
      decision: { outcome: 'allow', ruleId: 'default-resources', reason: 'rule #7 [default-resources] auto-approves' }, fired: rules[6], skipped: [],
    });
    await renderPage();
    await userEvent.selectOptions(screen.getByLabelText('Request kind'), 'resources/read');
    await userEvent.type(screen.getByLabelText('Server'), 'filesystem');
    await userEvent.type(screen.getByLabelText('Resource URI'), 'file:///notes.md');
    await userEvent.click(screen.getByRole('button', { name: 'Test' }));
    expect(fakeApi.rules.test).toHaveBeenCalledWith(expect.objectContaining({ kind: 'resources/read', serverId: 'filesystem', toolName: 'file:///notes.md' }));
    expect(within(await screen.findByTestId('test-result')).getByText('Auto-approved')).toBeTruthy();
  });

  it('a new test that fails clears the previous result and shows its error where it happened', async () => {
    vi.mocked(fakeApi.rules.test).mockResolvedValueOnce({
      decision: { outcome: 'allow', ruleId: 'r-read', reason: 'rule #1 [r-read] auto-approves' }, fired: rules[0], skipped: [],
    });
    await renderPage();
    await userEvent.type(screen.getByLabelText('Server'), 'filesystem');
    await userEvent.type(screen.getByLabelText('Tool'), 'read_file');
    await userEvent.click(screen.getByRole('button', { name: 'Test' }));
    await screen.findByTestId('test-result');

    // Invalid JSON: the error is under the arguments, the old result is gone.
    const args = screen.getByLabelText('Arguments (JSON)');
    await userEvent.clear(args);
    await userEvent.type(args, '{{nope');
    await userEvent.click(screen.getByRole('button', { name: 'Test' }));
    expect(screen.queryByTestId('test-result')).toBeNull();
    expect(args.getAttribute('aria-invalid')).toBe('true');
    expect(screen.getByRole('alert').textContent).toMatch(/Arguments must be JSON/);

    // A backend error: shown in the panel, still no stale result.
    vi.mocked(fakeApi.rules.test).mockRejectedValueOnce(new ApiError('invalid', 'server and tool are required to test a call'));
    await userEvent.clear(args);
    await userEvent.type(args, '{{}');
    await userEvent.click(screen.getByRole('button', { name: 'Test' }));
    expect((await screen.findByTestId('test-error')).textContent).toContain('server and tool are required');
    expect(screen.queryByTestId('test-result')).toBeNull();
  });

  it('deletes only after confirmation', async () => {
    const rows = await renderPage();
    // Every row's buttons say which rule they act on.
    await userEvent.click(within(rows[0]).getByRole('button', { name: 'Delete rule #1' }));
    expect(fakeApi.rules.delete).not.toHaveBeenCalled();
    await userEvent.click(within(rows[0]).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(fakeApi.rules.delete).toHaveBeenCalledWith('r-read'));
  });

  it('moving a rule asks the backend to move it one place, then reloads', async () => {
    const rows = await renderPage();
    const loads = vi.mocked(fakeApi.rules.list).mock.calls.length;
    await userEvent.click(within(rows[1]).getByRole('button', { name: /^Move rule #\d+ up$/ }));
    await waitFor(() => expect(fakeApi.rules.move).toHaveBeenCalledWith('r-scoped', -1));
    await waitFor(() => expect(vi.mocked(fakeApi.rules.list).mock.calls.length).toBeGreaterThan(loads));
    await userEvent.click(within(rows[1]).getByRole('button', { name: /^Move rule #\d+ down$/ }));
    await waitFor(() => expect(fakeApi.rules.move).toHaveBeenCalledWith('r-scoped', 1));
    // A rule moves among the rules of its kind: the last tool rule cannot go down into the prompts.
    expect((within(rows[3]).getByRole('button', { name: /^Move rule #\d+ down$/ }) as HTMLButtonElement).disabled).toBe(true);
    expect((within(rows[4]).getByRole('button', { name: /^Move rule #\d+ up$/ }) as HTMLButtonElement).disabled).toBe(true);
  });
  it('keeps the keyboard on the rule it acts on: move, edit, cancel, delete and its Escape (found by a new-user test: focus fell to the page)', async () => {
    const moved = [rules[1], rules[0], ...rules.slice(2)];
    const rows = await renderPage();
    const row = () => screen.getAllByTestId('rule-row').find((r) => r.dataset.ruleId === 'r-scoped')!;
    vi.mocked(fakeApi.rules.list).mockResolvedValue(moved);
    within(rows[1]).getByRole('button', { name: 'Move rule #2 up' }).focus();
    await userEvent.keyboard('{Enter}');
    await waitFor(() => expect(row().dataset.position).toBe('1'));
    // First of its kind now: "up" is disabled, so the keyboard is on "down".
    await waitFor(() => expect(document.activeElement).toBe(within(row()).getByRole('button', { name: 'Move rule #1 down' })));

    await userEvent.click(within(row()).getByRole('button', { name: 'Edit rule #1' }));
    await userEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(document.activeElement).toBe(within(row()).getByRole('button', { name: 'Edit rule #1' })));

    within(row()).getByRole('button', { name: 'Delete rule #1' }).focus();
    await userEvent.keyboard('{Enter}');
    expect(document.activeElement?.textContent).toBe('Delete');
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(document.activeElement).toBe(within(row()).getByRole('button', { name: 'Delete rule #1' })));
    expect(fakeApi.rules.delete).not.toHaveBeenCalled();

    vi.mocked(fakeApi.rules.list).mockResolvedValue(moved.filter((r) => r.id !== 'r-scoped'));
    await userEvent.keyboard('{Enter}{Enter}');
    await waitFor(() => expect(fakeApi.rules.delete).toHaveBeenCalledWith('r-scoped'));
    // The rule that took its place has the keyboard.
    await waitFor(() => expect(document.activeElement).toBe(within(screen.getAllByTestId('rule-row')[0]).getByRole('button', { name: 'Edit rule #1' })));
  });

  it('Escape in a rule being edited cancels the edit, as the Cancel button does (found by a new-user test: Escape did nothing)', async () => {
    const rows = await renderPage();
    await userEvent.click(within(rows[0]).getByRole('button', { name: 'Edit rule #1' }));
    const form = screen.getByRole('form', { name: 'Save rule' });
    const priority = within(form).getByLabelText(/Priority/);
    await userEvent.clear(priority);
    await userEvent.type(priority, '99');
    await userEvent.keyboard('{Escape}');
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Save rule' })).toBeNull());
    expect(fakeApi.rules.update).not.toHaveBeenCalled();
  });

  it('an edit keeps what changed elsewhere while the form was open', async () => {
    // Found by a new-user test: an expiry added from the CLI meanwhile was
    // dropped, and an expiring auto-approve rule became permanent.
    const rows = await renderPage();
    await userEvent.click(within(rows[0]).getByRole('button', { name: 'Edit rule #1' }));
    const expiring = { ...rules[0], expiresAt: '2026-01-02T00:00:00Z' };
    const loads = vi.mocked(fakeApi.rules.list).mock.calls.length;
    vi.mocked(fakeApi.rules.list).mockResolvedValue([expiring, ...rules.slice(1)]);
    emit('rules:changed', { version: 5 });
    await waitFor(() => expect(vi.mocked(fakeApi.rules.list).mock.calls.length).toBeGreaterThan(loads));
    const form = screen.getByRole('form', { name: 'Save rule' });
    const priority = within(form).getByLabelText(/Priority/);
    await userEvent.clear(priority);
    await userEvent.type(priority, '20');
    vi.mocked(fakeApi.rules.update).mockResolvedValue({ ...expiring, priority: 20 });
    await userEvent.click(within(form).getByRole('button', { name: 'Save rule' }));
    await waitFor(() => expect(fakeApi.rules.update).toHaveBeenCalled());
    const [id, input] = vi.mocked(fakeApi.rules.update).mock.calls[0];
    expect(id).toBe('r-read');
    expect(input.priority).toBe(20);
    expect(input.expiresAt).toBe('2026-01-02T00:00:00Z');
  });

  it('a refused field takes the keyboard, and its error is announced and tied to it', async () => {
    await renderPage();
    await userEvent.click(screen.getByRole('button', { name: 'New rule' }));
    const form = screen.getByRole('form', { name: 'Create rule' });
    await userEvent.type(within(form).getByLabelText(/Tool pattern/), 'read_?');
    await userEvent.click(within(form).getByRole('button', { name: 'Create rule' }));
    const pattern = within(form).getByLabelText(/Tool pattern/);
    await waitFor(() => expect(document.activeElement).toBe(pattern));
    const err = within(form).getByRole('alert');
    expect(err.textContent).toMatch(/Only \* is a wildcard/);
    expect(pattern.getAttribute('aria-describedby')).toBe(err.id);
  });
});
