// Auto-run's state where the person looks for it (new-user test): a task
// that auto-run gave up on, on the Board. Its card looked like any task
// being worked on — in progress, no sign of a run — and only the task's
// detail said that every attempt failed and auto-run stopped trying. And a
// task waiting for a free place (runs at a time reached): its detail said
// "No runs yet" and offered Run, as if auto-run would never take it up.
import { chmodSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openUi, rpc, shots, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 30_000 };

interface Project { id: string; name: string }
interface CreatedAgent { agent: { id: string; name: string; role: string }; token: string }
interface Card { id: string; status: string }
interface Run { id: string; status: string; reason: string }

describe('auto-run state on the board', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let work = '';
  let project: Project;

  const card = (id: string) => page.locator(`[data-testid=task-card][data-task-id="${id}"]`);

  async function agentWith(name: string, body: string): Promise<CreatedAgent> {
    const a = await rpc<CreatedAgent>(page, 'Agents.Create', { name, kind: 'worker', human: false, parent: '', role: '', projects: [project.id], compact: false });
    const cmd = join(work, `${name}.sh`);
    writeFileSync(cmd, `#!/bin/sh\n${body}\n`);
    chmodSync(cmd, 0o755);
    await rpc(page, 'Runs.SetProfile', a.agent.id, {
      agentId: a.agent.id, template: 'custom', command: cmd, args: [], extraArgs: [], workDir: work, model: '', env: {}, prompt: '', updatedAt: '0001-01-01T00:00:00Z',
    });
    return a;
  }

  async function taskInProgress(title: string, assigneeId: string): Promise<string> {
    const c = await rpc<Card>(page, 'Board.Create', project.id, {
      localId: '', title, description: '', priority: 'medium', status: 'todo', assigneeId, parentTaskId: '', dependsOn: [],
    });
    await rpc(page, 'Board.Move', c.id, 'in_progress', '');
    return c.id;
  }

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    work = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-e2e-autorun-')));
    await rpc(page, 'Builtin.AllowPath', work);
    project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
  });

  afterAll(async () => {
    await ui?.close();
    await airlock?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('a task auto-run gave up on shows it on its card, not only in its detail', async () => {
    await rpc(page, 'Runs.SetSettings', { autoRun: true, maxConcurrent: 2, maxAttempts: 1, retryBackoffSeconds: 0, stopGraceSeconds: 5 });
    const broken = await agentWith('broken', 'echo "no API key" >&2; exit 3');
    const taskId = await taskInProgress('Fix the footer', broken.agent.id);
    await expect.poll(async () => (await rpc<Run[]>(page, 'Runs.List', taskId))[0]?.reason ?? '', LIVE).toContain('auto-run gave up');

    await page.goto(new URL(`#/board/${project.id}`, page.url()).href);
    await card(taskId).waitFor(LIVE);
    await shots(page, 'autorun-gave-up-card');
    const said = async () => `${await card(taskId).textContent()} ${await card(taskId).getByRole('button').first().getAttribute('aria-label')}`;
    await expect.poll(said, LIVE).toMatch(/fail|gave up/i);
  });

  it('a task waiting for a free place says that auto-run will start it', async () => {
    await rpc(page, 'Runs.SetSettings', { autoRun: true, maxConcurrent: 1, maxAttempts: 1, retryBackoffSeconds: 0, stopGraceSeconds: 5 });
    const first = await agentWith('first', 'exec sleep 300');
    const second = await agentWith('second', 'exec sleep 300');
    const running = await taskInProgress('Write the header', first.agent.id);
    await expect.poll(async () => (await rpc<Run[]>(page, 'Runs.List', running))[0]?.status ?? '', LIVE).toBe('running');
    const waiting = await taskInProgress('Write the menu', second.agent.id);

    await page.goto(new URL(`#/board/${project.id}/${waiting}`, page.url()).href);
    await expect.poll(() => page.getByTestId('task-detail').getAttribute('data-task-id'), LIVE).toBe(waiting);
    const panel = page.getByTestId('task-runs-panel');
    await panel.waitFor(LIVE);
    expect(await rpc<Run[]>(page, 'Runs.List', waiting), 'auto-run holds it back (1 run at a time)').toEqual([]);
    await panel.evaluate((el) => el.scrollIntoView({ block: 'start' }));
    await shots(page, 'autorun-waiting-detail');
    // It says it waits for auto-run (a free place), not only "No runs yet".
    await expect.poll(() => panel.textContent(), LIVE).toMatch(/auto-run/i);
  });
});
