import { beforeEach, describe, expect, it, vi } from 'vitest';
import { render, screen, waitFor } from '@testing-library/svelte';
import userEvent from '@testing-library/user-event';
import { ApiError } from '../../api';
import type { RunnerSettings } from '../../api';
import { fakeApi, resetFakeApi } from '../../testing/fakeApi';
import { settings } from '../../testing/runs';
import { testStores } from '../../testing/stores';
import RunSettingsButton from './RunSettingsButton.svelte';

vi.mock('../../api', async () => (await import('../../testing/fakeApi')).fakeApiModule());

describe('run settings', () => {
  beforeEach(() => {
    resetFakeApi();
    vi.mocked(fakeApi.runs.settings).mockResolvedValue(settings());
    vi.mocked(fakeApi.runs.setSettings).mockImplementation(async (s: RunnerSettings) => s);
  });

  async function open() {
    const { context, stores } = testStores();
    render(RunSettingsButton, { context });
    const button = await screen.findByTestId('run-settings-button');
    await waitFor(() => expect(button.textContent).toContain('Auto-run off'));
    await userEvent.click(button);
    await screen.findByTestId('run-settings');
    await screen.findByRole('switch', { name: 'Auto-run' });
    return { stores, button };
  }

  it('switches auto-run at once, and the button says so', async () => {
    const { button } = await open();
    await userEvent.click(screen.getByRole('switch', { name: 'Auto-run' }));
    expect(fakeApi.runs.setSettings).toHaveBeenCalledWith(settings({ autoRun: true }));
    await waitFor(() => expect(button.textContent).toContain('Auto-run on'));
    expect(screen.getByRole('switch', { name: 'Auto-run' })).toHaveProperty('checked', true);
  });

  it('checks the limits in place and saves them together', async () => {
    await open();
    const runsAtATime = screen.getByLabelText(/^Runs at a time/) as HTMLInputElement;
    await userEvent.clear(runsAtATime);
    await userEvent.type(runsAtATime, '40');
    expect(screen.getByText('Between 1 and 32 runs.')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Save limits' })).toHaveProperty('disabled', true);
    await userEvent.clear(runsAtATime);
    await userEvent.type(runsAtATime, '4');
    const retry = screen.getByLabelText(/^Retry after/) as HTMLInputElement;
    await userEvent.clear(retry);
    await userEvent.type(retry, '60');
    await userEvent.click(screen.getByRole('button', { name: 'Save limits' }));
    expect(fakeApi.runs.setSettings).toHaveBeenCalledWith(settings({ maxConcurrent: 4, retryBackoffSeconds: 60 }));
    await screen.findByText(/Saved; auto-run uses them at once/);
  });

  it('shows a refusal from the backend where the change was made', async () => {
    vi.mocked(fakeApi.runs.setSettings).mockRejectedValue(new ApiError('invalid', 'stopGraceSeconds must be between 1 and 120'));
    await open();
    const grace = screen.getByLabelText(/^Stop grace/) as HTMLInputElement;
    await userEvent.clear(grace);
    await userEvent.type(grace, '9');
    await userEvent.click(screen.getByRole('button', { name: 'Save limits' }));
    expect((await screen.findByTestId('run-settings-error')).textContent).toBe('stopGraceSeconds must be between 1 and 120');
  });
});
