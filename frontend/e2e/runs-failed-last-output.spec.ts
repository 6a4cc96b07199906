// Found by a new-user test: a failed run's row shows "Last output" — its
// last lines, there to say why it failed — in a small box scrolled to its
// top. When the lines before the failure are long (a tool's JSON answer,
// a stack trace), the box shows them and the failure itself (the last
// line: "FAIL … approval_timeout …") is below the fold of the box.
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openUi, rpc, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 30_000 };

interface Project { id: string }
interface CreatedAgent { agent: { id: string } }
interface Card { id: string }
interface Run { id: string; status: string }

describe('a failed run\'s last output', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let work = '';

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    work = realpathSync(mkdtempSync(join(tmpdir(), 'airlock-e2e-runs-')));
  });

  afterAll(async () => {
    await ui?.close();
    await airlock?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it('shows the line that says why it failed', async () => {
    // Long lines of progress, then a step whose expectation is not met.
    const chatty = `progress report: ${'all fine so far, reading more files, '.repeat(8)}`;
    const script = join(work, 'fails.yaml');
    writeFileSync(script, `steps:\n${`  - print: "${chatty}"\n`.repeat(5)}  - call: help\n    expect: {contains: the-word-that-is-not-there}\n`);
    await rpc(page, 'Builtin.AllowPath', work);
    const project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    const builder = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'builder', kind: 'worker', human: false, parent: '', role: '', projects: [project.id], compact: false });
    await rpc(page, 'Runs.SetProfile', builder.agent.id, {
      agentId: builder.agent.id, template: 'scripted', command: '', args: [], extraArgs: [script], workDir: work, model: '', env: {}, prompt: '', updatedAt: '0001-01-01T00:00:00Z',
    });
    const task = await rpc<Card>(page, 'Board.Create', project.id, {
      localId: '', title: 'Check the docs', description: '', priority: 'medium', status: 'todo', assigneeId: builder.agent.id, parentTaskId: '', dependsOn: [],
    });
    const run = await rpc<Run>(page, 'Runs.Start', task.id);
    await expect.poll(async () => (await rpc<Run>(page, 'Runs.Get', run.id)).status, LIVE).toBe('failed');

    // The person opens the task later and looks at why its run failed.
    await page.goto(new URL(`#/board/${project.id}/${task.id}`, page.url()).href);
    const box = page.getByTestId('task-runs-panel').locator(`[data-testid=run-row][data-run-id="${run.id}"]`).getByTestId('run-last-output').locator('pre');
    await expect.poll(() => box.textContent(), LIVE).toContain('the-word-that-is-not-there');
    await box.evaluate((el) => el.scrollIntoView({ block: 'center' }));
    const failureInView = await box.evaluate((pre) => {
      // Where the failure's text sits inside the box, against what the box shows.
      const text = pre.firstChild as Text;
      const at = text.data.lastIndexOf('the-word-that-is-not-there');
      const range = document.createRange();
      range.setStart(text, at);
      range.setEnd(text, at + 8);
      const r = range.getBoundingClientRect();
      const b = pre.getBoundingClientRect();
      return { failureTop: Math.round(r.top), boxBottom: Math.round(b.bottom), shown: r.top >= b.top && r.bottom <= b.bottom + 1 };
    });
    expect(failureInView, 'the failure is below what the Last output box shows').toMatchObject({ shown: true });
  });
});
