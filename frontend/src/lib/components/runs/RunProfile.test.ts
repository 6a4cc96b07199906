import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { ApiError } from '../../api';
import type { AgentView, Profile } from '../../api';
import { fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { agentView, overview } from '../../testing/agents';
import { PLACEHOLDERS, TEMPLATES, profile, settings } from '../../testing/runs';
import { testStores } from '../../testing/stores';
import RunProfile from './RunProfile.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

const token = { id: 'tok_1', agentId: 'ag_bob', prefix: 'alk_x', legacy: false, createdAt: '' };
const bob = agentView('ag_bob', 'bob', 'worker', 'ag_owner', { tokens: [token] });

function renderProfile(agent: AgentView = bob) {
  const { stores, context } = testStores();
  return { stores, ...render(RunProfile, { context, props: { agent } }) };
}

/** Textareas and inputs by their visible label. */
const field = (name: RegExp) => screen.getByLabelText(name) as HTMLInputElement | HTMLTextAreaElement;

describe('RunProfile', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.runs.templates).mockResolvedValue(TEMPLATES);
    vi.mocked(fakeApi.runs.placeholders).mockResolvedValue(PLACEHOLDERS);
    vi.mocked(fakeApi.runs.settings).mockResolvedValue(settings());
    vi.mocked(fakeApi.builtin.get).mockResolvedValue(overview({ roots: ['/work'] }));
    vi.mocked(fakeApi.builtin.servers).mockResolvedValue([]);
    vi.mocked(fakeApi.runs.setProfile).mockImplementation(async (agentId: string, p: Profile) => ({ ...p, agentId, updatedAt: new Date().toISOString() }));
  });

  it('shows what each launcher starts, explains the per-run credential, and saves the profile', async () => {
    const { rerender } = renderProfile();
    await screen.findByRole('form', { name: 'Run profile' });
    expect(screen.getByTestId('run-profile').textContent).toContain('Each run gets its own credential of bob');
    expect(screen.getByTestId('profile-state').textContent).toBe('no profile yet');
    expect(screen.getByTestId('launch-command').textContent).toBe("claude -p {{prompt}} --mcp-config {{mcp_config}} --strict-mcp-config --allowedTools mcp__airlock");

    await userEvent.type(field(/^Model/), 'opus');
    expect(screen.getByTestId('launch-command').textContent).toContain('--model opus');

    await userEvent.click(screen.getByRole('radio', { name: /Scripted agent/ }));
    expect(screen.getByTestId('launch-command').textContent).toBe('airlock agent-script --mcp-config {{mcp_config}} --var task_id={{task_id}}');
    expect(screen.queryByLabelText(/^Model/), 'the scripted agent takes no model').toBeNull();
    expect(screen.getByTestId('problem-extraArgs').textContent).toContain('needs the script file');
    expect(screen.getByRole('button', { name: 'Create profile' })).toHaveProperty('disabled', true);

    await userEvent.type(screen.getByTestId('extra-args'), '/work/script.yaml');
    // The Agents store reloads (agents:changed): edits in progress stay.
    await rerender({ agent: { ...bob } });
    expect(fakeApi.runs.profiles, 'the profile is not read again').toHaveBeenCalledTimes(1);
    await new Promise((r) => setTimeout(r, 0)); // answers that might reset the form
    expect((screen.getByTestId('extra-args') as HTMLTextAreaElement).value).toBe('/work/script.yaml');
    await userEvent.type(field(/^Environment/), 'DEBUG=1');
    await userEvent.type(screen.getByTestId('workdir'), '/work/app');
    await userEvent.click(screen.getByRole('button', { name: 'Create profile' }));
    await screen.findByTestId('profile-saved');
    expect(fakeApi.runs.setProfile).toHaveBeenCalledWith('ag_bob', {
      agentId: 'ag_bob', template: 'scripted', command: '', args: [], extraArgs: ['/work/script.yaml'], workDir: '/work/app', model: '', env: { DEBUG: '1' }, prompt: '', updatedAt: '0001-01-01T00:00:00Z',
    });
    expect(screen.getByTestId('profile-state').textContent).toBe('profile set');
    expect(screen.getByRole('button', { name: 'Save profile' })).toHaveProperty('disabled', true);
  });

  it('shows an unknown placeholder under its field before anything is sent', async () => {
    renderProfile();
    await screen.findByRole('form', { name: 'Run profile' });
    await userEvent.type(screen.getByTestId('extra-args'), '--x={{{{secret}}');
    expect(screen.getByTestId('problem-extraArgs').textContent).toBe('Extra argument 1 uses the unknown placeholder {{secret}}. Known names are listed below.');
    expect(screen.getByRole('button', { name: 'Create profile' })).toHaveProperty('disabled', true);
    const list = screen.getByTestId('placeholders');
    expect(within(list).getAllByRole('term').map((t) => t.textContent)).toContain('{{mcp_config}}');
  });

  it('states the allowed folders and shows the refusal of one outside them under the field', async () => {
    vi.mocked(fakeApi.runs.setProfile).mockRejectedValue(
      new ApiError('workdir_outside_roots', 'the working directory /etc is outside the folders allowed for agents (/work)', 'choose a folder inside one of them, or allow it on the Built-in tools screen'),
    );
    renderProfile();
    await screen.findByRole('form', { name: 'Run profile' });
    expect(screen.getByTestId('run-profile').textContent).toContain('Must be inside a folder allowed for the built-in tools');
    await userEvent.type(screen.getByTestId('workdir'), '/etc');
    expect(screen.getByTestId('workdir-outside').textContent).toContain('not inside an allowed folder');
    await userEvent.click(screen.getByRole('button', { name: 'Create profile' }));
    const refusal = await screen.findByTestId('profile-refusal');
    expect(refusal.textContent).toContain('outside the folders allowed for agents');
    expect(refusal.closest('label')?.textContent, 'the refusal sits in the working directory field').toContain('Working directory');
    expect(screen.getByTestId('workdir').getAttribute('aria-invalid')).toBe('true');
  });

  it('says when no folder is allowed and when the agent has no token', async () => {
    vi.mocked(fakeApi.builtin.get).mockResolvedValue(overview({ roots: [] }));
    renderProfile({ ...bob, tokens: [] });
    await screen.findByRole('form', { name: 'Run profile' });
    expect(screen.getByTestId('no-roots').textContent).toContain('No folder is allowed for agents yet');
    const noToken = screen.getByTestId('profile-no-token');
    expect(within(noToken).getByRole('link', { name: 'Connect' }).getAttribute('href')).toBe('#/agents/ag_bob?tab=connect');
  });

  it('edits a stored profile and removes it after a confirmation', async () => {
    vi.mocked(fakeApi.runs.profiles).mockResolvedValue([profile('ag_bob', { template: 'custom', command: '/opt/agent', args: ['--config', '{{mcp_config}}'], env: { A: 'b' } })]);
    renderProfile();
    await screen.findByRole('form', { name: 'Run profile' });
    expect(screen.getByRole('radio', { name: /Custom command/ })).toHaveProperty('checked', true);
    expect(field(/^Command/).value).toBe('/opt/agent');
    expect(field(/^Arguments/).value).toBe('--config\n{{mcp_config}}');
    expect(screen.getByTestId('launch-command').textContent).toBe('/opt/agent --config {{mcp_config}}');

    await userEvent.click(screen.getByRole('button', { name: 'Remove profile' }));
    expect(fakeApi.runs.deleteProfile).not.toHaveBeenCalled();
    await userEvent.click(screen.getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(fakeApi.runs.deleteProfile).toHaveBeenCalledWith('ag_bob'));
    await waitFor(() => expect(screen.getByTestId('profile-state').textContent).toBe('no profile yet'));
  });

  it('warns, without refusing, when the saved profile\'s program is not found; a fixed one clears the warning', async () => {
    const missing = { path: '', warning: 'the command "claude" was not found in PATH', hint: "install it, or give its full path as the command of the agent's run profile" };
    vi.mocked(fakeApi.runs.checkCommand).mockResolvedValue(missing);
    renderProfile();
    await screen.findByRole('form', { name: 'Run profile' });
    expect(fakeApi.runs.checkCommand, 'no profile yet: nothing to look for').not.toHaveBeenCalled();
    await userEvent.click(screen.getByRole('button', { name: 'Create profile' }));
    await screen.findByTestId('profile-saved');
    const warning = await screen.findByTestId('profile-command-warning');
    expect(warning.textContent).toContain('the command "claude" was not found in PATH');
    expect(warning.textContent).toContain('The profile is saved, but runs of bob will fail to start until it is there');
    expect(warning.textContent).toContain('give its full path');
    expect(vi.mocked(fakeApi.runs.checkCommand).mock.lastCall![0]).toMatchObject({ agentId: 'ag_bob', template: 'claude-code' });

    vi.mocked(fakeApi.runs.checkCommand).mockResolvedValue({ path: '/opt/claude' });
    await userEvent.type(field(/^Program/), '/opt/claude');
    expect(screen.queryByTestId('profile-command-warning'), 'the warning is about the saved profile, not the edit').toBeNull();
    await userEvent.click(screen.getByRole('button', { name: 'Save profile' }));
    await waitFor(() => expect(fakeApi.runs.checkCommand).toHaveBeenCalledTimes(2));
    await screen.findByTestId('profile-saved');
    expect(screen.queryByTestId('profile-command-warning')).toBeNull();
  });

  it('warns of a stored profile\'s missing program when it is opened', async () => {
    vi.mocked(fakeApi.runs.profiles).mockResolvedValue([profile('ag_bob', { template: 'codex' })]);
    vi.mocked(fakeApi.runs.checkCommand).mockResolvedValue({ path: '', warning: 'the command "codex" was not found in PATH' });
    renderProfile();
    expect((await screen.findByTestId('profile-command-warning')).textContent).toContain('"codex" was not found in PATH');
  });

  it('says a person is not run', async () => {
    renderProfile(agentView('ag_ann', 'ann', 'worker', 'ag_owner', { human: true }));
    expect((await screen.findByTestId('run-profile-person')).textContent).toContain('Airlock runs only AI agents');
    expect(screen.queryByRole('form')).toBeNull();
  });
});
