import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import type { Rule } from '../../api';
import RulesPage from './RulesPage.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

const t = '2026-01-01T00:00:00Z';
function rule(over: Partial<Rule>): Rule {
  return {
    id: 'x', serverId: null, toolName: null, toolPattern: null, autoApprove: false, priority: 0, conditions: [],
    agentId: null, sessionId: null, expiresAt: null, createdAt: t, updatedAt: t, ...over,
  };
}

const rules = [
  rule({ id: 'r-read', serverId: 'filesystem', toolPattern: 'read_*', autoApprove: true, priority: 10 }),
  rule({ id: 'r-scoped', serverId: 'filesystem', toolName: 'write_file', priority: 5, agentId: 'claude-code', conditions: [{ path: '$.path', op: 'inside', value: '/work' }] }),
  rule({ id: 'r-dead', serverId: 'filesystem', toolName: 'read_file', priority: 1 }),
  rule({ id: 'r-global', priority: 0 }),
];

describe('RulesPage (ToolPermissionSettings)', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.ListRules).mockResolvedValue(rules);
    vi.mocked(fakeApi.ShadowedRules).mockResolvedValue([{ ruleId: 'r-dead', byRuleId: 'r-read', why: 'read_* always matches first' }]);
  });

  it('shows a rejected rules file as soon as the page loads', async () => {
    vi.mocked(fakeApi.GetRulesState).mockResolvedValue({ version: 4, fileError: 'rules.json: invalid character at line 3' });
    const { context } = testStores();
    render(RulesPage, { context });
    expect(await screen.findByText(/invalid character at line 3/)).toBeTruthy();
  });

  it('lists rules in evaluation order with their badges', async () => {
    const { context } = testStores();
    render(RulesPage, { context });
    const rows = await screen.findAllByTestId('rule-row');
    expect(rows.map((r) => r.dataset.ruleId)).toEqual(['r-read', 'r-scoped', 'r-dead', 'r-global']);
    const first = within(rows[0]);
    expect(first.getByText('auto-approve ON')).toBeTruthy();
    expect(first.getByText('priority 10')).toBeTruthy();
    expect(first.getByText('server: filesystem')).toBeTruthy();
    expect(first.getByText('pattern: read_*')).toBeTruthy();
    const second = within(rows[1]);
    expect(second.getByText('tool: write_file')).toBeTruthy();
    expect(second.getByText('agent: claude-code')).toBeTruthy();
    expect(second.getByText('$.path inside /work')).toBeTruthy();
    expect(within(rows[2]).getByTestId('rule-shadowed').textContent).toContain('never fires — shadowed by r-read');
    expect(within(rows[3]).getByText('global — every tool')).toBeTruthy();
    expect(screen.getByTestId('evaluation-order').textContent!.replace(/\s+/g, ' ')).toContain('exact tool name > pattern > server-only > global');
  });

  it('rejects a non-integer priority next to the field without calling the backend', async () => {
    const { context } = testStores();
    render(RulesPage, { context });
    await screen.findAllByTestId('rule-row');
    await userEvent.click(screen.getByRole('button', { name: 'New rule' }));
    const form = screen.getByRole('form', { name: 'Create rule' });
    const prio = within(form).getByLabelText('Priority');
    await userEvent.clear(prio);
    await userEvent.type(prio, '1.5');
    await userEvent.click(within(form).getByRole('button', { name: 'Create rule' }));
    expect(within(form).getByRole('alert').textContent).toMatch(/whole number/);
    expect(prio.getAttribute('aria-invalid')).toBe('true');
    expect(fakeApi.CreateRule).not.toHaveBeenCalled();
  });

  it('creates a rule with the typed fields', async () => {
    vi.mocked(fakeApi.CreateRule).mockResolvedValue(rule({ id: 'new' }));
    const { context } = testStores();
    render(RulesPage, { context });
    await screen.findAllByTestId('rule-row');
    await userEvent.click(screen.getByRole('button', { name: 'New rule' }));
    const form = within(screen.getByRole('form', { name: 'Create rule' }));
    await userEvent.type(form.getByLabelText('Server id'), 'everything');
    await userEvent.type(form.getByLabelText(/Tool name/), 'echo');
    await userEvent.clear(form.getByLabelText('Priority'));
    await userEvent.type(form.getByLabelText('Priority'), '-3');
    await userEvent.click(form.getByLabelText('Auto-approve'));
    await userEvent.click(form.getByRole('button', { name: 'Create rule' }));
    expect(fakeApi.CreateRule).toHaveBeenCalledWith({
      serverId: 'everything', toolName: 'echo', toolPattern: null, autoApprove: true, priority: -3,
      conditions: [], agentId: null, sessionId: null, expiresAt: null,
    });
  });

  it('the test panel shows the decision, the fired rule and why rules above did not match', async () => {
    vi.mocked(fakeApi.TestRule).mockResolvedValue({
      decision: { autoApprove: false, ruleId: 'r-global', ruleSetVersion: 4, reason: 'global rule asks' },
      fired: rules[3],
      skipped: [
        { rule: rules[0], why: 'server is everything, rule wants filesystem' },
        { rule: rules[1], why: 'tool echo is not write_file' },
      ],
    });
    const { context } = testStores();
    render(RulesPage, { context });
    await screen.findAllByTestId('rule-row');
    await userEvent.type(screen.getByLabelText('Server'), 'everything');
    await userEvent.type(screen.getByLabelText('Tool'), 'echo');
    const args = screen.getByLabelText('Arguments (JSON)');
    await userEvent.clear(args);
    await userEvent.type(args, '{{"message":"hi"}');
    await userEvent.click(screen.getByRole('button', { name: 'Test' }));
    expect(fakeApi.TestRule).toHaveBeenCalledWith({ serverId: 'everything', toolName: 'echo', arguments: '{"message":"hi"}', agentId: undefined, sessionId: undefined });
    const result = within(await screen.findByTestId('test-result'));
    expect(result.getByText('Asks for approval')).toBeTruthy();
    expect(result.getByTestId('test-fired').textContent).toBe('r-global');
    expect(result.getByText(/server is everything, rule wants filesystem/)).toBeTruthy();
    expect(result.getByText(/tool echo is not write_file/)).toBeTruthy();
  });

  it('deletes only after confirmation', async () => {
    const { context } = testStores();
    render(RulesPage, { context });
    const rows = await screen.findAllByTestId('rule-row');
    await userEvent.click(within(rows[0]).getByRole('button', { name: 'Delete' }));
    expect(fakeApi.DeleteRule).not.toHaveBeenCalled();
    await userEvent.click(within(rows[0]).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(fakeApi.DeleteRule).toHaveBeenCalledWith('r-read'));
  });

  it('moving a rule asks the backend to move it one place, then reloads', async () => {
    const { context } = testStores();
    render(RulesPage, { context });
    const rows = await screen.findAllByTestId('rule-row');
    const loads = vi.mocked(fakeApi.ListRules).mock.calls.length;
    await userEvent.click(within(rows[1]).getByRole('button', { name: 'Move up' }));
    await waitFor(() => expect(fakeApi.MoveRule).toHaveBeenCalledWith('r-scoped', -1));
    await waitFor(() => expect(vi.mocked(fakeApi.ListRules).mock.calls.length).toBeGreaterThan(loads));
    await userEvent.click(within(rows[1]).getByRole('button', { name: 'Move down' }));
    await waitFor(() => expect(fakeApi.MoveRule).toHaveBeenCalledWith('r-scoped', 1));
  });
});
