// Issue 7 through the Agents screen against a real `airlock serve`: create an
// agent, copy its token (shown once), connect a real MCP client with it and
// see that agent's tools; follow a refusal's hint link to the setting that
// changes it; switch a tool off for the agent; suspend the agent in the UI
// and see its next call refused. Screenshots: e2e/screenshots/real-agents-*.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import {
  connectClient, everythingEntry, openUi, refusalCode, resultText, rpc, shots, startAirlock, waitForTool,
  type Airlock, type Browser,
} from './harness';

/** A call's outcome, whether the refusal came as a tool error or a protocol error. */
async function attempt(client: Client, name: string, args: Record<string, unknown>) {
  try {
    const r = await client.callTool({ name, arguments: args });
    return { ok: !r.isError, text: resultText(r), code: refusalCode(r) };
  } catch (err) {
    return { ok: false, text: String(err), code: '' };
  }
}

describe('the Agents screen through a real airlock serve', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let client: Client | undefined;
  let token = '';
  let agentId = '';

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    await ui.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(airlock.uiUrl).origin });
    // Setup through the facade: a server with tools, and a rule so calls do not wait for a person.
    await rpc(page, 'Servers.Add', { id: 'everything', command: process.execPath, args: [everythingEntry(), 'stdio'] });
    await rpc(page, 'Rules.Create', {
      kind: 'tool', serverId: 'everything', toolName: null, toolPattern: null, autoApprove: true, priority: 10, conditions: [],
      agentId: null, sessionId: null, expiresAt: null,
    });
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    await ui?.close();
    await airlock?.stop();
  });

  const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

  it('starts with the owner and the agent that holds the old shared token, and says what to do', async () => {
    await page.getByRole('link', { name: 'Agents' }).click();
    const rows = page.getByTestId('agent-row');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.allTextContents()).toEqual([expect.stringContaining('owner'), expect.stringContaining('default')]);
    await page.getByTestId('agents-intro').waitFor();
    await shots(page, 'real-agents-empty');
  });

  it('creates an agent and shows its token once, masked; Copy copies the real token and snippets', async () => {
    await page.getByRole('button', { name: 'New agent' }).first().click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Name').fill('scout');
    await dialog.getByRole('button', { name: 'Create agent' }).click();
    const shown = dialog.getByTestId('new-token');
    await shown.waitFor();
    await dialog.getByTestId('connect-snippet').waitFor();
    expect(await dialog.getByRole('note').textContent()).toContain("You won't see them again");
    await shots(page, 'real-agents-created');

    await dialog.getByRole('button', { name: 'Copy the agent token' }).click();
    await expect.poll(clipboard).toMatch(/^alk_[A-Za-z0-9_-]{40,}$/);
    token = await clipboard();
    expect(await shown.textContent()).toBe(token.slice(0, 10) + '•'.repeat(24));
    expect(await page.content()).not.toContain(token);

    for (const client of ['Claude Code', 'Claude Desktop', 'Cursor', 'Codex CLI', 'Gemini CLI']) {
      await dialog.getByRole('tab', { name: client }).click();
      await dialog.getByRole('button', { name: `Copy the ${client} snippet, with the token` }).click();
      await expect.poll(clipboard).toContain(token);
      expect(await page.content()).not.toContain(token);
    }
    expect(await clipboard()).toContain(airlock.mcpUrl);
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });
    agentId = (await page.getByTestId('agent-detail').getAttribute('data-agent-id'))!;
    expect(agentId).toMatch(/^ag_/);
    expect(await page.getByTestId('agent-detail').getByRole('heading').first().textContent()).toBe('scout');
  });

  it('connects a real client with the copied token: it sees only what its role grants', async () => {
    client = await connectClient(airlock, 'claude-code', '2.1.0', token);
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toContain('help');
    expect(names.some((n) => n.startsWith('everything__'))).toBe(false); // the default role grants nothing
    const refused = await attempt(client, 'everything__echo', { message: 'hi' });
    expect(refused.ok).toBe(false);
    expect(refused.code).toBe('not_subscribed');
    expect(refused.text).toContain(`#/agents/${agentId}?tab=role`);
  });

  it('the refusal\'s hint link lands on the agent\'s Role tab, where granting the server shows the tools at once', async () => {
    const refused = await attempt(client!, 'everything__echo', { message: 'hi' });
    const link = /#\/agents\/\S+?\?tab=role/.exec(refused.text)![0];
    await page.getByRole('link', { name: 'Servers' }).click(); // somewhere else first
    await page.goto(new URL(link, page.url()).href);
    await expect.poll(() => page.getByTestId('agent-detail').getAttribute('data-agent-id')).toBe(agentId);
    expect(await page.getByRole('tab', { name: 'Role' }).getAttribute('aria-selected')).toBe('true');
    const grants = page.getByTestId('role-grants');
    expect(await grants.getAttribute('data-role')).toBe('default');

    await grants.getByLabel('Grant everything to role default').check();
    await waitForTool(client!, 'everything__echo');
    const ok = await attempt(client!, 'everything__echo', { message: 'granted' });
    expect(ok, ok.text).toMatchObject({ ok: true });
    expect(ok.text).toContain('granted');
  });

  it('a tool switched off for the agent on the Tools tab is refused, and back on it works', async () => {
    await page.getByRole('tab', { name: 'Tools' }).click();
    const row = page.locator('[data-testid=access-row][data-tool="everything__echo"]');
    await expect.poll(() => row.getAttribute('data-allowed')).toBe('true');
    await row.getByRole('switch').uncheck();
    await expect.poll(() => row.getAttribute('data-code')).toBe('user_disabled');
    const off = await attempt(client!, 'everything__echo', { message: 'x' });
    expect(off).toMatchObject({ ok: false, code: 'user_disabled' });
    await shots(page, 'real-agents-tools');
    await row.getByRole('switch').check();
    await expect.poll(() => row.getAttribute('data-allowed')).toBe('true');
    expect(await attempt(client!, 'everything__echo', { message: 'on again' })).toMatchObject({ ok: true });
  });

  it('suspending the agent in the UI refuses its very next call', async () => {
    await page.getByTestId('agent-detail').getByRole('button', { name: 'Suspend' }).click();
    await expect.poll(() => page.getByTestId('agent-status').textContent()).toBe('suspended');
    const refused = await attempt(client!, 'everything__echo', { message: 'after suspend' });
    expect(refused.ok).toBe(false);
    expect(refused.text).toContain('suspended');
    await page.getByRole('tab', { name: 'Status' }).click();
    await shots(page, 'real-agents');

    await page.getByRole('button', { name: 'Resume' }).click();
    await expect.poll(() => page.getByTestId('agent-status').textContent()).toBe('active');
    await client!.close().catch(() => {});
    client = await connectClient(airlock, 'claude-code', '2.1.0', token);
    await waitForTool(client, 'everything__echo');
    expect(await attempt(client, 'everything__echo', { message: 'back' })).toMatchObject({ ok: true });
  });

  it('another window sees the new agent without a reload', async () => {
    const second = await ui.context.newPage();
    await second.goto(new URL('#/agents', page.url()).href);
    await second.getByRole('tree', { name: 'Agent hierarchy' }).waitFor();
    await rpc(page, 'Agents.Create', { name: 'helper', kind: 'worker', human: false, parent: '', role: '', projects: [], compact: false });
    await expect.poll(() => second.getByTestId('agent-row').allTextContents()).toContainEqual(expect.stringContaining('helper'));
    await second.close();
  });

  it('at 600 px wide the nav is a rail of icons, and a long invalid project name wraps in its error', async () => {
    await page.setViewportSize({ width: 600, height: 700 });
    try {
      const nav = page.getByRole('navigation', { name: 'Main' });
      await expect.poll(async () => (await nav.boundingBox())?.width ?? 999).toBeLessThan(80);
      await nav.getByRole('link', { name: 'Agents' }).click(); // the labels still name the links
      await page.getByRole('group', { name: 'Show' }).getByRole('button', { name: /^Projects/ }).click();
      const name = 'a'.repeat(200);
      await page.getByLabel('Project name').fill(name);
      await page.getByRole('button', { name: 'Create project' }).click();
      const error = page.getByRole('alert').filter({ hasText: 'must be 1-64' });
      await error.waitFor();
      expect(await error.evaluate((e) => e.scrollWidth <= e.clientWidth), 'the error text stays inside its box').toBe(true);
      const box = (await error.boundingBox())!;
      expect(box.x + box.width).toBeLessThanOrEqual(600);
      await shots(page, 'real-narrow-projects');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
