import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { testStores } from '../../testing/stores';
import type { Info } from '../../api';
import ConnectAgent from './ConnectAgent.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

const TOKEN = 'alk_agent_7c1e4f0d9b2a48e6a5f3';

describe('ConnectAgent', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.system.info).mockResolvedValue({
      version: '1.0.0', mcpUrl: 'http://127.0.0.1:7801/mcp', sseUrl: '', agentToken: TOKEN, dataDir: '/d', configPath: '/d/servers.json',
    } as Info);
  });

  it('never prints the token in full while it is masked; Show reveals it', async () => {
    const { context } = testStores();
    render(ConnectAgent, { context, props: { onclose: () => {} } });
    await screen.findByTestId('agent-token');
    for (const tab of ['Claude Code', 'Cursor (mcp.json)', 'stdio clients']) {
      await userEvent.click(screen.getByRole('tab', { name: tab }));
      expect(document.body.innerHTML).not.toContain(TOKEN);
    }
    expect(screen.getByTestId('agent-token').textContent!.startsWith('alk_ag')).toBe(true);
    await userEvent.click(screen.getByRole('button', { name: 'Show' }));
    expect(screen.getByTestId('agent-token').textContent).toBe(TOKEN);
    expect(screen.getByTestId('connect-snippet').textContent).toContain(TOKEN);
  });

  it('copies the whole snippet, token included, without revealing it', async () => {
    const user = userEvent.setup();
    const { context } = testStores();
    render(ConnectAgent, { context, props: { onclose: () => {} } });
    await screen.findByTestId('agent-token');
    await user.click(screen.getByRole('button', { name: 'Copy this snippet, with the token' }));
    await waitFor(async () => expect(await navigator.clipboard.readText()).toContain(`Bearer ${TOKEN}`));
    await user.click(screen.getByRole('button', { name: 'Copy the agent token' }));
    await waitFor(async () => expect(await navigator.clipboard.readText()).toBe(TOKEN));
    expect(document.body.innerHTML).not.toContain(TOKEN);
  });

  it('gives stdio clients the token in the environment, never on the command line', async () => {
    vi.mocked(fakeApi.system.info).mockResolvedValue({
      version: '1.0.0', mcpUrl: 'http://127.0.0.1:7801/mcp', sseUrl: '', agentToken: TOKEN, dataDir: '/d', configPath: '/d/servers.json', binary: '/opt/airlock', bridge: '/opt/airlock-bridge',
    } as Info);
    const { context } = testStores();
    render(ConnectAgent, { context, props: { onclose: () => {} } });
    await screen.findByTestId('agent-token');
    await userEvent.click(screen.getByRole('tab', { name: 'stdio clients' }));
    await userEvent.click(screen.getByRole('button', { name: 'Show' }));
    const cfg = JSON.parse(screen.getByTestId('connect-snippet').textContent!);
    expect(cfg.mcpServers.airlock).toEqual({ command: '/opt/airlock-bridge', args: ['--url', 'http://127.0.0.1:7801/mcp'], env: { AIRLOCK_TOKEN: TOKEN } });
  });

  it('says there is no shared token once the agent "default" was deleted, instead of showing a dead one', async () => {
    vi.mocked(fakeApi.system.info).mockResolvedValue({
      version: '1.0.0', mcpUrl: 'http://127.0.0.1:7801/mcp', sseUrl: '', agentToken: '', dataDir: '/d', configPath: '/d/servers.json',
    } as Info);
    const { context } = testStores();
    render(ConnectAgent, { context, props: { onclose: () => {} } });
    expect((await screen.findByTestId('no-shared-token')).textContent).toContain('which was deleted');
    expect(screen.queryByTestId('connect-snippet')).toBeNull();
    expect(screen.getByRole('link', { name: 'Create an agent' }).getAttribute('href')).toBe('#/agents');
  });
});
