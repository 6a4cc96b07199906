// Issue 2: add a server in the Servers screen, see its tools, call a tool
// from a real MCP client, see the call in Activity.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectClient, everythingEntry, openUi, resultText, shot, startAirlock, waitForTool, type Airlock, type Browser } from './harness';

describe('servers and activity through a real airlock serve', () => {
  let airlock: Airlock;
  let ui: Browser;
  let client: Client | undefined;

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    await ui?.close();
    await airlock?.stop();
  });

  it('adds server-everything from the Servers screen and lists its tools', async () => {
    const { page } = ui;
    await page.getByRole('link', { name: 'Servers' }).click();
    await page.getByRole('heading', { name: 'No MCP servers yet' }).waitFor();
    await shot(page, 'e2e-servers-empty');

    await page.getByRole('button', { name: 'Add server' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/^Server id/).fill('everything');
    await dialog.getByLabel('Command').fill(process.execPath);
    await dialog.getByLabel(/Arguments/).fill(`${everythingEntry()}\nstdio`);
    await dialog.getByRole('button', { name: 'Add server' }).click();
    await dialog.waitFor({ state: 'detached' });

    const tools = page.getByTestId('tool-list');
    await tools.getByText('everything__echo', { exact: true }).waitFor({ timeout: 30_000 });
    await expect.poll(() => page.getByTestId('server-state').first().textContent()).toContain('running');
    await shot(page, 'e2e-servers-everything');
  });

  it('shows a call made by an MCP client in Activity', async () => {
    const { page } = ui;
    client = await connectClient(airlock);
    await waitForTool(client, 'everything__echo');
    await page.getByRole('link', { name: 'Activity' }).click();

    const call = client.callTool({ name: 'everything__echo', arguments: { message: 'hello from e2e' } }, undefined, { timeout: 120_000 });
    call.catch(() => {});
    // With the HITL layer in place a fresh install asks first; approve if so.
    const dialog = page.getByTestId('approval-tool').waitFor({ timeout: 60_000 }).then(() => 'dialog' as const, () => 'none' as const);
    if ((await Promise.race([call.then(() => 'result' as const), dialog])) === 'dialog') {
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
    }
    const result = await call;
    expect(result.isError ?? false).toBe(false);
    expect(resultText(result)).toContain('hello from e2e');

    const row = page.getByTestId('activity-row').filter({ hasText: 'echo' }).first();
    await row.waitFor({ timeout: 15_000 });
    expect(await row.textContent()).toContain('everything');
    await row.click();
    await expect.poll(() => page.getByTestId('activity-args').textContent()).toContain('hello from e2e');
    await shot(page, 'e2e-activity');
  });

  it('says the link expired when the UI cookie is gone', async () => {
    const { page, context } = ui;
    await context.clearCookies();
    await page.getByRole('link', { name: 'Rules' }).click(); // the page loads rules → 401
    const alert = page.getByRole('alert').filter({ hasText: 'expired' });
    await alert.waitFor({ timeout: 10_000 });
    expect((await alert.textContent())!.replace(/\s+/g, ' ')).toContain(
      'This Airlock UI link has expired or is missing its token. Open the URL printed by airlock serve.',
    );
    await shot(page, 'e2e-auth-expired');
  });
});
