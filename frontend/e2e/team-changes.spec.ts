// The Agents and Servers screens against a real `airlock serve`, for what
// new-user tests found: taking an agent off a project where it holds open
// tasks asks first, names them, and leaves them unassigned (one in progress
// back to todo); the New agent form offers no worker as a parent; removing
// a server says that the rules naming it stay. Screenshots:
// e2e/screenshots/real-team-*.png.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { everythingEntry, openUi, rpc, shots, startAirlock, type Airlock, type Browser } from './harness';

interface Project { id: string; name: string }
interface CreatedAgent { agent: { id: string; name: string } }
interface Task { id: string; status: string; assigneeId: string }

const LIVE = { timeout: 15_000, interval: 100 };

describe('team changes through a real airlock serve', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let project: Project;
  let lead: CreatedAgent;
  let scout: CreatedAgent;

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    project = await rpc<Project>(page, 'Agents.CreateProject', 'website', 'The marketing site');
    lead = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'lead', kind: 'manager', human: false, parent: '', role: '', projects: [project.id], compact: false });
    scout = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'scout', kind: 'worker', human: false, parent: lead.agent.id, role: '', projects: [project.id], compact: false });
  }, 60_000);

  afterAll(async () => {
    await ui?.close();
    await airlock?.stop();
  });

  it('asks before taking an agent off a project where it holds open tasks, then leaves them unassigned', async () => {
    const started = await rpc<Task>(page, 'Board.Create', project.id, {
      localId: '', title: 'Write the pricing page', description: '', priority: 'high', status: 'todo', assigneeId: scout.agent.id, parentTaskId: '', dependsOn: [],
    });
    await rpc(page, 'Board.Move', started.id, 'in_progress', '');
    const waiting = await rpc<Task>(page, 'Board.Create', project.id, {
      localId: '', title: 'Fix the footer links', description: '', priority: 'low', status: 'todo', assigneeId: scout.agent.id, parentTaskId: '', dependsOn: [],
    });
    await page.goto(new URL(`#/agents/${scout.agent.id}?tab=projects`, page.url()).href);
    const box = page.getByRole('checkbox', { name: /website/ });
    await box.waitFor();
    await box.uncheck();
    const ask = page.getByRole('alertdialog', { name: 'Take scout off website?' });
    await ask.waitFor();
    const text = (await ask.textContent()) ?? '';
    expect(text).toContain('scout holds 2 open tasks in this project');
    expect(text).toContain('Write the pricing page');
    expect(text).toContain('the one in progress goes back to todo');
    await shots(page, 'real-team-take-off-project');
    await ask.getByRole('button', { name: 'Take off and unassign' }).click();
    await expect.poll(async () => (await page.getByRole('status').textContent()) ?? '', LIVE).toContain('2 tasks scout held in website are unassigned now');
    expect(await page.getByRole('checkbox', { name: /website/ }).isChecked()).toBe(false);
    await expect.poll(async () => {
      const a = await rpc<{ task: Task }>(page, 'Board.Detail', started.id);
      const b = await rpc<{ task: Task }>(page, 'Board.Detail', waiting.id);
      return [a.task.assigneeId, a.task.status, b.task.assigneeId, b.task.status];
    }, LIVE).toEqual(['', 'todo', '', 'todo']);
    await shots(page, 'real-team-taken-off-project');
  });

  it('offers no worker as a parent in the New agent form, and says why a chosen parent cannot be', async () => {
    await page.goto(new URL('#/agents', page.url()).href);
    await page.getByRole('button', { name: 'New agent' }).first().click();
    const dialog = page.getByRole('dialog');
    const parent = dialog.getByLabel('Reports to');
    expect(await parent.locator('option', { hasText: 'scout' }).isDisabled()).toBe(true);
    await parent.selectOption(lead.agent.id);
    await dialog.getByLabel('Kind').selectOption('coordinator');
    await expect.poll(async () => (await dialog.getByRole('alert').textContent()) ?? '', LIVE).toBe('a coordinator cannot report to a manager');
    await shots(page, 'real-team-new-agent-parent');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
  });

  it('says, before removing a server, that the rules naming it stay', async () => {
    await rpc(page, 'Servers.Add', { id: 'everything', command: process.execPath, args: [everythingEntry(), 'stdio'] });
    await rpc(page, 'Rules.Create', {
      kind: 'tool', serverId: 'everything', toolName: null, toolPattern: null, autoApprove: true, priority: 10, conditions: [],
      agentId: null, sessionId: null, expiresAt: null,
    });
    await page.goto(new URL('#/servers', page.url()).href);
    await page.getByRole('button', { name: 'Remove' }).click();
    await expect.poll(async () => (await page.locator('main').textContent()) ?? '', LIVE)
      .toContain('Remove everything? 1 rule names it and stays (Rules screen): it would apply to a server added later as everything.');
    await shots(page, 'real-team-remove-server');
  });
});
