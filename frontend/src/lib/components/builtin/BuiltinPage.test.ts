import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor, within } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { emit, fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import { overview } from '../../testing/agents';
import { ApiError } from '../../api/transport';
import BuiltinPage from './BuiltinPage.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

function renderPage() {
  const { context } = testStores();
  return render(BuiltinPage, { context });
}

describe('BuiltinPage', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.builtin.servers).mockResolvedValue(['file-read', 'file-write', 'shell-exec']);
    vi.mocked(fakeApi.builtin.get).mockResolvedValue(overview());
    vi.mocked(fakeApi.builtin.update).mockImplementation(async (s) => ({ ...overview(), settings: s, enabled: s.roots.length > 0 }));
  });

  it('says the tools are off and turns them on by allowing a folder', async () => {
    vi.mocked(fakeApi.builtin.allowPath).mockResolvedValue(overview({ roots: ['/home/me/site'] }));
    renderPage();
    expect(await screen.findByRole('heading', { name: 'The built-in tools are off' })).toBeTruthy();
    expect(screen.getByTestId('builtin-state').textContent).toBe('off');
    await userEvent.type(screen.getByLabelText('Folder to allow (absolute path)'), '/home/me/site');
    await userEvent.click(screen.getByRole('button', { name: 'Allow folder and turn on' }));
    expect(fakeApi.builtin.allowPath).toHaveBeenCalledWith('/home/me/site');
    expect((await screen.findByTestId('root-row')).dataset.path).toBe('/home/me/site');
    expect(screen.getByTestId('builtin-state').textContent).toBe('on');
  });

  it('says whether the kernel keeps shell commands out of the data directory', async () => {
    vi.mocked(fakeApi.builtin.get).mockResolvedValue(overview({ roots: ['/home/me/site'] }));
    const { unmount } = renderPage();
    const on = await screen.findByTestId('shell-sandbox');
    expect(on.textContent).toContain('kernel sandbox');
    expect(on.textContent).toContain('Landlock ABI 7');
    expect(on.querySelector('code')!.textContent).toBe('/home/me/.config/airlock');
    unmount();

    vi.mocked(fakeApi.builtin.get).mockResolvedValue({ ...overview({ roots: ['/home/me/site'] }), sandbox: { enforced: false, reason: 'this kernel has no Landlock (Linux 5.13 or later has it)', hidden: ['/home/me/.config/airlock'] } });
    renderPage();
    const off = await screen.findByTestId('shell-sandbox');
    expect(off.textContent).toContain('no kernel sandbox');
    expect(off.textContent).toContain('this kernel has no Landlock');
    expect(off.textContent).toContain('a path a command computes as it runs is not seen');
  });

  it('shows a refused folder under the field, keeping what was typed', async () => {
    vi.mocked(fakeApi.builtin.allowPath).mockRejectedValue(new ApiError('invalid', 'folder / is the root of the file system; allowing it would give agents the whole machine', 'allow the project folders agents work in'));
    renderPage();
    const input = (await screen.findByLabelText('Folder to allow (absolute path)')) as HTMLInputElement;
    await userEvent.type(input, '/{Enter}');
    expect((await screen.findByTestId('folder-error')).textContent).toContain('the whole machine — allow the project folders agents work in');
    expect(input.value).toBe('/');
    expect(input.getAttribute('aria-invalid')).toBe('true');
  });

  it('adds a deny rule at once; a refused rule is reported in the deny list, not elsewhere', async () => {
    renderPage();
    const deny = await screen.findByTestId('deny-list');
    await userEvent.type(within(deny).getByLabelText('Add to Deny rules'), 'shutdown{Enter}');
    expect(vi.mocked(fakeApi.builtin.update).mock.lastCall![0].deny).toEqual(['rm {-r,--recursive} {-f,--force}', 'shutdown']);
    await waitFor(() => expect(within(deny).getAllByTestId('list-item').map((li) => li.querySelector('.text')!.textContent)).toContain('shutdown'));

    vi.mocked(fakeApi.builtin.update).mockRejectedValueOnce(new ApiError('invalid', 'deny rule 3 "{": unbalanced {'));
    const add = within(deny).getByLabelText('Add to Deny rules') as HTMLInputElement;
    await userEvent.type(add, '{{{Enter}');
    expect((await within(deny).findByTestId('list-error')).textContent).toContain('deny rule 3');
    expect(add.value).toBe('{');
    expect(within(screen.getByTestId('ask-list')).queryByTestId('list-error')).toBeNull();
  });

  it('removes an ask rule; "Reset to defaults" shows while the list differs from the defaults', async () => {
    vi.mocked(fakeApi.builtin.get).mockResolvedValue(overview({ ask: ['{sudo,su}', 'echo'] }));
    renderPage();
    const ask = await screen.findByTestId('ask-list');
    expect(within(ask).getByRole('button', { name: 'Reset to defaults' })).toBeTruthy();
    await userEvent.click(within(ask).getByRole('button', { name: 'Remove echo' }));
    expect(fakeApi.builtin.update).not.toHaveBeenCalled(); // it asks first
    const q = within(ask).getByRole('group', { name: 'Remove this ask rule? Commands it sent to you can run without asking.' });
    await userEvent.click(within(q).getByRole('button', { name: 'Remove' }));
    expect(vi.mocked(fakeApi.builtin.update).mock.lastCall![0].ask).toEqual(['{sudo,su}']);
    await waitFor(() => expect(within(ask).queryByRole('button', { name: 'Reset to defaults' })).toBeNull());
  });

  it('asks before a deny rule goes; Cancel keeps it', async () => {
    renderPage();
    const deny = await screen.findByTestId('deny-list');
    const rule = 'rm {-r,--recursive} {-f,--force}';
    await userEvent.click(within(deny).getByRole('button', { name: `Remove ${rule}` }));
    const q = within(deny).getByRole('group', { name: 'Remove this deny rule? Commands it refused can run at once.' });
    await userEvent.click(within(q).getByRole('button', { name: 'Cancel' }));
    expect(fakeApi.builtin.update).not.toHaveBeenCalled();
    await userEvent.click(within(deny).getByRole('button', { name: `Remove ${rule}` }));
    await userEvent.click(within(deny).getByRole('button', { name: 'Remove' }));
    expect(vi.mocked(fakeApi.builtin.update).mock.lastCall![0].deny).toEqual([]);
  });

  it('asks before an allowed folder goes, saying the tools turn off with the last one', async () => {
    vi.mocked(fakeApi.builtin.get).mockResolvedValue(overview({ roots: ['/p'] }));
    renderPage();
    await userEvent.click(await screen.findByRole('button', { name: 'Remove /p' }));
    expect(fakeApi.builtin.removePath).not.toHaveBeenCalled();
    const q = screen.getByRole('group', { name: 'Agents lose this folder, and the built-in tools turn off.' });
    await userEvent.click(within(q).getByRole('button', { name: 'Remove' }));
    expect(fakeApi.builtin.removePath).toHaveBeenCalledWith('/p');
  });

  it('switches one server off', async () => {
    vi.mocked(fakeApi.builtin.get).mockResolvedValue(overview({ roots: ['/p'] }));
    renderPage();
    await userEvent.click(await screen.findByRole('switch', { name: 'shell-exec on' }));
    expect(vi.mocked(fakeApi.builtin.update).mock.lastCall![0].off).toEqual(['shell-exec']);
    await waitFor(() => expect((screen.getByRole('switch', { name: 'shell-exec on' }) as HTMLInputElement).checked).toBe(false));
  });

  it('shows a refused limit under that field', async () => {
    vi.mocked(fakeApi.builtin.update).mockRejectedValue(new ApiError('invalid', 'shellTimeoutSeconds must be between 1 and 3600, got 9999'));
    renderPage();
    const field = await screen.findByTestId('limit-timeout');
    const input = within(field).getByLabelText('Command timeout') as HTMLInputElement;
    await userEvent.clear(input);
    await userEvent.type(input, '9999');
    input.dispatchEvent(new Event('change', { bubbles: true }));
    expect((await within(field).findByRole('alert')).textContent).toContain('between 1 and 3600');
    expect(within(screen.getByTestId('limit-output')).queryByRole('alert')).toBeNull();
  });

  it('follows builtin:changed from elsewhere (the CLI, another window)', async () => {
    renderPage();
    await screen.findByRole('heading', { name: 'The built-in tools are off' });
    emit('builtin:changed', overview({ roots: ['/from/cli'] }));
    expect((await screen.findByTestId('root-row')).dataset.path).toBe('/from/cli');
  });

  it('tests a command against the lists in force', async () => {
    vi.mocked(fakeApi.builtin.classify).mockResolvedValue({ outcome: 'ask', findings: [{ outcome: 'ask', rule: '{sudo,su}', command: 'sudo ls', reason: 'matches the ask list' }], commands: ['sudo ls'] });
    renderPage();
    await userEvent.type(await screen.findByLabelText('Command line to test'), 'sudo ls{Enter}');
    expect(fakeApi.builtin.classify).toHaveBeenCalledWith('sudo ls', []);
    const result = await screen.findByTestId('classify-result');
    expect(result.dataset.outcome).toBe('ask');
    expect(result.textContent).toContain('asks a person');
    expect(result.textContent).toContain('{sudo,su}');
  });
});
