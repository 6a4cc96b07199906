// Issue 2: add a server in the Servers screen, see its tools, call a tool
// from a real MCP client, see the call in Activity — and in its chart of
// calls by decision over time (SPEC §10).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { connectClient, everythingEntry, openUi, resultText, shot, shots, startAirlock, waitForTool, type Airlock, type Browser } from './harness';

describe('servers and activity through a real airlock serve', () => {
  let airlock: Airlock;
  let ui: Browser;
  let client: Client | undefined;
  /** The decision of the first echo: approved in the dialog, or auto-allowed by a default rule. */
  let firstDecision: 'approved' | 'auto-allowed' = 'auto-allowed';

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
    await dialog.getByLabel('Command', { exact: true }).fill(process.execPath);
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
      firstDecision = 'approved';
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

  it('charts the calls by decision and lists the calls of a clicked bar', async () => {
    const { page } = ui;
    const c = client!;
    // A second echo, declined in the dialog (or, if echo needs no approval, allowed again).
    const second = c.callTool({ name: 'everything__echo', arguments: { message: 'second call' } }, undefined, { timeout: 120_000 });
    second.catch(() => {});
    let secondDecision: 'declined / denied' | 'auto-allowed' = 'auto-allowed';
    if (firstDecision === 'approved') {
      await page.getByTestId('approval-tool').waitFor({ timeout: 30_000 });
      await page.getByRole('button', { name: 'Decline', exact: true }).click();
      secondDecision = 'declined / denied';
    }
    await second;
    // A tool no server has: refused before any decision.
    const unknown = await c.callTool({ name: 'everything__no_such_tool', arguments: {} });
    expect(unknown.isError).toBe(true);

    const chart = page.getByTestId('activity-chart');
    await page.getByTestId('activity-row').nth(2).waitFor({ timeout: 15_000 });
    // The chart reloads for live calls (throttled): wait for all three.
    await expect.poll(() => chart.getByTestId('chart-total').textContent(), { timeout: 15_000 }).toBe('3 requests');
    const bars = chart.getByTestId('chart-bar');
    expect(await bars.count()).toBe(60);

    // Counts by decision, summed over the bars (the calls may straddle a minute).
    const labels = await bars.evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''));
    const counted = (what: string) => labels.reduce((n, l) => n + Number(new RegExp(`(\\d+) ${what}[,)]`).exec(l)?.[1] ?? 0), 0);
    const want: Record<string, number> = { 'auto-allowed': 0, approved: 0, 'declined / denied': 0, error: 1 };
    want[firstDecision]++;
    want[secondDecision]++;
    expect(Object.fromEntries(Object.keys(want).map((k) => [k, counted(k)]))).toEqual(want);

    // The tooltip of the bar with the refused call names the error (the
    // calls may straddle a minute, so that is not always the busiest bar).
    const withError = labels.findIndex((l) => Number(/(\d+) error[,)]/.exec(l)?.[1] ?? 0) > 0);
    await bars.nth(withError).hover();
    const tip = chart.getByTestId('chart-tooltip');
    await tip.waitFor();
    expect(await tip.textContent()).toContain('error');
    await shots(page, 'e2e-activity-chart');
    // Click the busiest bar: the table lists exactly its calls.
    const totals = await bars.evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-total'))));
    const busiest = totals.indexOf(Math.max(...totals));
    const bar = bars.nth(busiest);
    await bar.hover();
    await bar.click();
    await page.getByTestId('activity-range').waitFor();
    await expect.poll(() => page.getByTestId('activity-row').count()).toBe(totals[busiest]);
    expect(await bar.getAttribute('aria-pressed')).toBe('true');
    await page.mouse.move(0, 0);
    await shots(page, 'e2e-activity-chart-picked');

    // The chip in the filter bar shows all times again.
    await page.getByRole('button', { name: 'Show all times' }).click();
    await expect.poll(() => page.getByTestId('activity-row').count()).toBe(3);
    expect(await page.getByTestId('activity-range').count()).toBe(0);

    // Another range asks again: the week holds the same three calls.
    await chart.getByRole('button', { name: '7 d' }).click();
    await expect.poll(() => chart.getByTestId('chart-bar').count()).toBe(168);
    expect(await chart.getByTestId('chart-total').textContent()).toBe('3 requests');
  });

  it('keeps no credential in a cookie, and says the link expired when its token is not this run\'s', async () => {
    const { page, context } = ui;
    // Browsers send a host's cookies to every port of it (a page an agent
    // serves on 127.0.0.1 too): the signed-in UI has none, and the token
    // is out of the address bar.
    expect(await context.cookies()).toEqual([]);
    expect(page.url()).not.toContain('token=');
    await page.evaluate(() => localStorage.setItem('airlock.uiToken', 'an-earlier-run'));
    await page.getByRole('link', { name: 'Rules' }).click(); // the page loads rules → 401
    const alert = page.getByRole('alert').filter({ hasText: 'expired' });
    await alert.waitFor({ timeout: 10_000 });
    expect((await alert.textContent())!.replace(/\s+/g, ' ')).toContain(
      'This Airlock UI link has expired or is missing its token (each start of Airlock makes a new one). Open the URL printed by airlock serve.',
    );
    await shot(page, 'e2e-auth-expired');
  });
});
