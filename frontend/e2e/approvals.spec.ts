// Issue 3: a client's call waits for the ToolApprovalDialog; Approve,
// Decline with a reason, "Approve and add rule", and a rule edited on the
// Rules page changing the very next decision of a connected client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { connectClient, everythingEntry, openUi, resultText, rpc, shot, startAirlock, waitForTool, type Airlock, type Browser } from './harness';

const TOOL = 'everything__echo';

describe('approvals through a real airlock serve', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let client: Client;

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    // Setup, not under test here (the Servers screen is covered by servers-activity.spec).
    await rpc(page, 'Servers.Add', { id: 'everything', command: process.execPath, args: [everythingEntry(), 'stdio'] });
    client = await connectClient(airlock);
    await waitForTool(client, TOOL);
    await page.getByRole('link', { name: 'Approvals' }).click();
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    await ui?.close();
    await airlock?.stop();
  });

  /**
   * Starts a call and waits until the dialog shows it. The pending call is
   * returned inside an object: returning the promise itself from an async
   * function would wait for the call to finish.
   */
  async function callAndWaitForDialog(message: string) {
    const call = client.callTool({ name: TOOL, arguments: { message } }, undefined, { timeout: 120_000 });
    call.catch(() => {});
    await page.getByTestId('approval-tool').waitFor({ timeout: 15_000 });
    await expect.poll(() => page.getByTestId('approval-args').textContent()).toContain(message);
    return { call };
  }

  async function dialogGone() {
    await page.getByTestId('approval-tool').waitFor({ state: 'detached', timeout: 10_000 });
  }

  it('Approve lets the waiting call through with the real result', async () => {
    const { call } = await callAndWaitForDialog('please approve');
    expect(await page.getByTestId('approval-tool').textContent()).toBe('echo');
    expect(await page.getByTestId('approval-server').textContent()).toBe('everything');
    await expect.poll(() => page.getByTestId('approvals-badge').textContent()).toBe('1');
    await shot(page, 'e2e-approval-dialog');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    const result = await call;
    expect(result.isError ?? false).toBe(false);
    expect(resultText(result)).toContain('please approve');
    await dialogGone();
    expect(await page.getByTestId('approvals-badge').count()).toBe(0);
  });

  it('Decline returns the reason to the agent as a tool error', async () => {
    const { call } = await callAndWaitForDialog('please decline');
    await page.getByLabel(/Reason for declining/).fill('not during the demo');
    await shot(page, 'e2e-approval-decline');
    await page.getByRole('button', { name: 'Decline', exact: true }).click();
    const result = await call;
    expect(result.isError).toBe(true);
    expect(resultText(result)).toContain('not during the demo');
    await dialogGone();
  });

  it('"Approve and add rule" makes the next identical call pass without a dialog', async () => {
    const { call } = await callAndWaitForDialog('remember this');
    await page.getByRole('radio', { name: /This tool \(echo\), any arguments/ }).check();
    await page.getByRole('button', { name: 'Approve and add rule' }).click();
    expect(resultText(await call)).toContain('remember this');
    await dialogGone();

    const again = await client.callTool({ name: TOOL, arguments: { message: 'remember this' } }, undefined, { timeout: 15_000 });
    expect(resultText(again)).toContain('remember this');
    expect(await page.getByTestId('approval-tool').count()).toBe(0);

    await page.getByRole('link', { name: 'Rules' }).click();
    const row = page.getByTestId('rule-row').filter({ hasText: 'tool: echo' }).first();
    await row.waitFor();
    expect(await row.getByTestId('rule-decision').textContent()).toBe('auto-approve ON');
    // Only for the agent that made the call (the dialog's default), shown by name.
    expect(await row.getByTestId('rule-badges').textContent()).toContain('agent: default');
    await shot(page, 'e2e-rules-after-add');
  });

  it('editing a rule on the Rules page changes the next decision of a connected client', async () => {
    await page.getByRole('link', { name: 'Rules' }).click();
    const row = page.getByTestId('rule-row').filter({ hasText: 'tool: echo' }).first();
    await row.waitFor();
    const ruleId = await row.getAttribute('data-rule-id');

    // Turn auto-approve off: the very next call must ask.
    await row.getByRole('button', { name: 'Edit' }).click();
    const editing = page.locator(`[data-rule-id="${ruleId}"]`);
    await editing.getByText('Auto-approve', { exact: true }).click();
    await expect.poll(() => editing.getByText('Ask me', { exact: true }).count()).toBe(1);
    await editing.getByRole('button', { name: 'Save rule' }).click();
    await expect.poll(() => editing.getByTestId('rule-decision').textContent()).toBe('auto-approve OFF');
    await shot(page, 'e2e-rules-edited');

    const { call } = await callAndWaitForDialog('asks again');
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    expect(resultText(await call)).toContain('asks again');
    await dialogGone();

    // And back on: the next call passes unasked.
    await editing.getByRole('button', { name: 'Edit' }).click();
    await editing.getByText('Ask me', { exact: true }).click();
    await editing.getByRole('button', { name: 'Save rule' }).click();
    await expect.poll(() => editing.getByTestId('rule-decision').textContent()).toBe('auto-approve ON');
    const passed = await client.callTool({ name: TOOL, arguments: { message: 'unasked' } }, undefined, { timeout: 15_000 });
    expect(resultText(passed)).toContain('unasked');
    expect(await page.getByTestId('approval-tool').count()).toBe(0);
  });

  it('the Rules page test panel says which rule decides a call', async () => {
    await page.getByRole('link', { name: 'Rules' }).click();
    const row = page.getByTestId('rule-row').filter({ hasText: 'tool: echo' }).first();
    const ruleId = await row.getAttribute('data-rule-id');
    const panel = page.locator('section[aria-labelledby="test-title"]');
    await panel.getByLabel('Server').fill('everything');
    await panel.getByLabel('Tool').fill('echo');
    // The rule "Approve and add rule" made is for the agent "default", named as such.
    await panel.getByLabel(/Agent/).fill('default');
    await panel.getByRole('button', { name: 'Test' }).click();
    await expect.poll(() => page.getByTestId('test-fired').textContent()).toBe(ruleId);
    expect(await page.getByTestId('test-result').textContent()).toContain('Auto-approved');

    await panel.getByLabel('Tool').fill('get-sum');
    await panel.getByRole('button', { name: 'Test' }).click();
    await expect.poll(() => page.getByTestId('test-result').textContent()).toContain('Asks for approval');
    await shot(page, 'e2e-rules-test-panel');
  });
});
