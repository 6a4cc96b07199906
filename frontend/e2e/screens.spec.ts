// Issue 6, as a new user would see it: every screen against a real
// `airlock serve` with two real servers, tool calls, a prompt, a resource
// read and calls waiting for a person — and screenshots of each screen in
// light and dark (e2e/screenshots/real-*.png) to look at.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import {
  connectClient, everythingEntry, filesystemEntry, openUi, resultText, rpc, shots, startAirlock, waitForTool,
  type Airlock, type Browser,
} from './harness';

interface Rule { id: string; kind: string }

function ruleInput(over: Record<string, unknown>) {
  return {
    kind: 'tool', serverId: null, toolName: null, toolPattern: null, autoApprove: false, priority: 0, conditions: [],
    agentId: null, sessionId: null, expiresAt: null, ...over,
  };
}

describe('every screen through a real airlock serve', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let client: Client;
  let root: string;
  const waiting: Promise<unknown>[] = [];

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'airlock-e2e-files-'));
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    // Setup through the facade: the Servers and Rules forms have their own specs.
    await rpc(page, 'Servers.Add', { id: 'everything', command: process.execPath, args: [everythingEntry(), 'stdio'] });
    await rpc(page, 'Servers.Add', { id: 'filesystem', command: process.execPath, args: [filesystemEntry(), root] });
    await rpc(page, 'Rules.Create', ruleInput({ serverId: 'everything', toolName: 'echo', autoApprove: true, priority: 10 }));
    await rpc(page, 'Rules.Create', ruleInput({ serverId: 'filesystem', toolPattern: 'read_*', autoApprove: true, priority: 5 }));
    await rpc(page, 'Rules.Create', ruleInput({ serverId: 'filesystem', toolName: 'read_text_file', priority: 1 })); // shadowed by read_*
    await rpc(page, 'Rules.Create', ruleInput({ serverId: 'filesystem', toolName: 'write_file', priority: 0, conditions: [{ path: '$.path', op: 'inside', value: root }] }));
    await rpc(page, 'Rules.Create', ruleInput({ kind: 'resource', serverId: 'everything', toolPattern: 'demo://resource/static/*', autoApprove: true }));
    client = await connectClient(airlock, 'claude-code', '2.1.0');
    await waitForTool(client, 'everything__echo');
    await waitForTool(client, 'filesystem__create_directory');
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    await Promise.allSettled(waiting);
    await ui?.close();
    await airlock?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  /** Starts a call that will wait for a person; it ends when someone decides. */
  function callThatWaits(name: string, args: Record<string, unknown>) {
    const call = client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 });
    call.catch(() => {});
    waiting.push(call);
    return call;
  }

  it('Servers: both servers run, their tools listed', async () => {
    await page.getByRole('link', { name: 'Servers' }).click();
    await page.getByRole('button', { name: /^filesystem/ }).click();
    await page.getByTestId('tool-list').getByText('filesystem__create_directory', { exact: true }).waitFor();
    for (const id of ['everything', 'filesystem']) {
      await expect.poll(() => page.locator(`#server-${id}`).getByTestId('server-state').textContent()).toBe('running');
    }
    // Airlock's own in-process servers, when there are any, are listed first and marked built-in.
    const views = await rpc<{ config: { id: string }; status: { builtIn?: boolean } }[]>(page, 'Servers.List');
    for (const v of views.filter((v) => v.status.builtIn)) {
      expect(await page.locator(`#server-${v.config.id}`).textContent()).toContain('built-in');
    }
    await shots(page, 'real-servers');
    // server-everything's instructions: on its panel, and in the agent's
    // context under its name (first sight: accepted, not flagged).
    await page.getByRole('button', { name: /^everything/ }).click();
    const instructions = page.getByTestId('instructions');
    await instructions.locator('summary').click();
    const given = (await instructions.locator('pre').textContent())?.trim() ?? '';
    expect(given.length).toBeGreaterThan(20);
    expect(await page.getByTestId('instructions-changed').count()).toBe(0);
    await shots(page, 'real-server-instructions');
    // (An agent gets them at initialize: this one connects now, when the
    // server runs; the suite's client connected before it did.)
    const fresh = await connectClient(airlock, 'cursor', '1.0');
    try {
      expect(fresh.getInstructions()).toContain(`## Server everything\n\n> ${given.split('\n')[0]}`);
    } finally {
      await fresh.close();
    }
  });

  it('Activity: newest first by id; a waiting call shows as running and becomes its result in place', async () => {
    await page.getByRole('link', { name: 'Activity' }).click();
    expect(resultText(await client.callTool({ name: 'everything__echo', arguments: { message: 'auto-approved by rule' } }))).toContain('auto-approved by rule');
    const { prompts } = await client.listPrompts();
    const prompt = prompts.find((p) => p.name.endsWith('simple-prompt'));
    expect(prompt, `prompts through Airlock: ${prompts.map((p) => p.name).join(', ')}`).toBeTruthy();
    await client.getPrompt({ name: prompt!.name }); // the default prompt rule lets it through
    const { resources } = await client.listResources();
    const doc = resources.find((r) => r.uri.includes('static/document'));
    expect(doc, `resources through Airlock: ${resources.map((r) => r.uri).join(', ')}`).toBeTruthy();
    await client.readResource({ uri: doc!.uri });

    const rows = page.getByTestId('activity-row');
    await expect.poll(() => rows.count()).toBe(3);
    // Newest first: ids descending, whatever finished when.
    const ids = async () => (await rows.evaluateAll((els) => els.map((e) => Number((e as HTMLElement).dataset.id))));
    expect(await ids()).toEqual([...(await ids())].sort((a, b) => b - a));
    expect(await rows.first().getByTestId('activity-kind').textContent()).toBe('resource');
    expect(await rows.nth(1).getByTestId('activity-kind').textContent()).toBe('prompt');
    // The agent and the MCP client are two fields.
    expect(await rows.first().getByTestId('activity-client').textContent()).toBe('claude-code 2.1.0');
    expect(await rows.first().getByTestId('activity-agent').textContent()).not.toContain('claude-code');

    const call = callThatWaits('everything__get-sum', { a: 2, b: 3 });
    await page.getByTestId('approval-tool').waitFor({ timeout: 15_000 });
    const row = rows.filter({ hasText: 'get-sum' });
    await expect.poll(() => row.getAttribute('data-status')).toBe('running');
    const id = await row.getAttribute('data-id');
    expect(await rows.first().getAttribute('data-id')).toBe(id);
    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    expect(resultText(await call)).toContain('5');
    await expect.poll(() => page.locator(`[data-testid=activity-row][data-id="${id}"]`).getAttribute('data-status')).toBe('ok');
    expect(await rows.filter({ hasText: 'get-sum' }).count()).toBe(1);
    expect(await rows.first().getAttribute('data-id')).toBe(id);

    await rows.nth(1).click(); // the resource read
    await expect.poll(() => page.getByRole('complementary', { name: 'Request detail' }).textContent()).toContain(doc!.uri.split('/').pop()!);
    await shots(page, 'real-activity');
  });

  it('Approvals: waiting calls list the agent and the client apart, with a risk label for every annotated tool', async () => {
    await page.getByRole('link', { name: 'Approvals' }).click();
    callThatWaits('filesystem__create_directory', { path: join(root, 'notes') }); // non-destructive, closed world
    await page.getByTestId('approval-tool').waitFor({ timeout: 15_000 });
    await expect.poll(() => page.getByTestId('approval-tool').textContent()).toBe('create_directory');
    expect(await page.getByTestId('approval-warning').getAttribute('data-risk')).toBe('modifies');
    expect(await page.getByTestId('approval-warning').textContent()).toContain('changes data');
    expect(await page.getByTestId('approval-agent').textContent()).not.toContain('claude-code');
    expect(await page.getByTestId('approval-client').textContent()).toBe('claude-code 2.1.0');
    callThatWaits('filesystem__write_file', { path: join(root, 'todo.md'), content: '# To do\n\n- try Airlock\n' });
    await expect.poll(() => page.getByTestId('queue-position').textContent()).toBe('1 of 2');
    await page.waitForTimeout(1100); // past the Enter guard: the footer shows the keys
    await shots(page, 'real-approval-dialog');

    await page.keyboard.press('Escape');
    const rows = page.getByTestId('approval-row');
    await expect.poll(() => rows.count()).toBe(2);
    expect(await rows.first().getByTestId('approval-row-client').textContent()).toBe('claude-code 2.1.0');
    // Each row shows its arguments on one line.
    expect(await rows.first().getByTestId('approval-row-args').textContent()).toContain('"path":');
    await shots(page, 'real-approvals');
    // "Decline all…" asks once more; Cancel leaves both waiting.
    await page.getByRole('button', { name: 'Decline all…' }).click();
    await page.getByRole('alertdialog', { name: 'Decline all waiting calls' }).waitFor();
    await shots(page, 'real-approvals-decline-all');
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    await page.getByRole('alertdialog').waitFor({ state: 'detached' });
    await expect.poll(() => rows.count()).toBe(2);

    // Decide both from the dialog, by keyboard: Review, then Enter approves once armed.
    await page.getByRole('button', { name: 'Review (2)' }).click();
    await page.getByTestId('approval-tool').waitFor();
    await page.waitForTimeout(1100);
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('approval-tool').textContent()).toBe('write_file');
    await page.getByRole('button', { name: 'Decline', exact: true }).click();
    await page.getByTestId('approval-tool').waitFor({ state: 'detached' });
    await page.getByRole('heading', { name: 'Nothing is waiting' }).waitFor();
  });

  it('Rules: numbered by evaluation order, and the explanations use the same numbers', async () => {
    await page.getByRole('link', { name: 'Rules' }).click();
    const rows = page.getByTestId('rule-row');
    const listed = await rpc<Rule[]>(page, 'Rules.List');
    await expect.poll(() => rows.count()).toBe(listed.length);
    expect(await rows.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset.ruleId))).toEqual(listed.map((r) => r.id));
    expect(await page.getByTestId('rule-position').allTextContents()).toEqual(listed.map((_, i) => `#${i + 1}`));

    const readRow = rows.filter({ hasText: 'pattern: read_*' });
    const readPos = await readRow.getAttribute('data-position');
    const readId = await readRow.getAttribute('data-rule-id');
    // The rule it shadows names it by the same number.
    const dead = rows.filter({ hasText: 'tool: read_text_file' });
    expect(await dead.getByTestId('rule-shadowed').textContent()).toContain(`rule #${readPos} decides first`);
    expect(await dead.getByTestId('rule-shadowed').getAttribute('title')).toContain(`rule #${readPos} [${readId}]`);

    const panel = page.locator('section[aria-labelledby="test-title"]');
    await panel.getByLabel('Server').fill('filesystem');
    await panel.getByLabel('Tool').fill('read_text_file');
    await panel.getByRole('button', { name: 'Test' }).click();
    await expect.poll(() => page.getByTestId('test-result').textContent()).toContain(`rule #${readPos} [${readId}]`);
    expect(await page.getByTestId('test-fired-position').textContent()).toBe(`#${readPos}`);

    // Kinds: the defaults for prompts and resources are listed, and a filter shows one kind.
    await page.getByRole('button', { name: /^Resource reads/ }).click();
    expect(await rows.getByTestId('rule-kind').allTextContents()).toEqual(['resource reads', 'resource reads']);
    await page.getByRole('button', { name: /^All/ }).click();
    await shots(page, 'real-rules');

    // A rule written with the name agents see: the form says how it is read, live.
    await page.getByRole('button', { name: 'New rule' }).click();
    const form = page.getByRole('form', { name: 'Create rule' });
    await form.getByLabel(/Tool name/).fill('everything__get-sum');
    await expect.poll(() => form.getByTestId('rule-lint').textContent(), { timeout: 10_000 }).toContain('everything__get-sum');
    await shots(page, 'real-rules-new');
    await form.getByRole('button', { name: 'Cancel' }).click();
  });
});
