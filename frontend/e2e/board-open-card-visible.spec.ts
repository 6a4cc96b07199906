// Found by a new-user test: opening a card in the Done (or Blocked) column
// opens the task's panel beside the board, which narrows the board, and
// the board does not scroll: the card just opened, which keeps the focus
// (Enter on it, or a click), is now out of sight behind the right edge.
// Arrow keys then move the focus between cards nobody can see.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openUi, rpc, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 15_000 };

interface Project { id: string }
interface CreatedAgent { agent: { id: string } }
interface Card { id: string }

describe('opening a task on the Board', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let project: Project;
  let doneId = '';

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    const scout = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'scout', kind: 'worker', human: false, parent: '', role: '', projects: [project.id], compact: false });
    const task = (title: string) =>
      rpc<Card>(page, 'Board.Create', project.id, { localId: '', title, description: '', priority: 'medium', status: 'todo', assigneeId: scout.agent.id, parentTaskId: '', dependsOn: [] });
    await task('Write the copy');
    const done = await task('Fix the footer');
    await rpc(page, 'Board.Move', done.id, 'in_progress', '');
    await rpc(page, 'Board.Move', done.id, 'done', '');
    doneId = done.id;
  });

  afterAll(async () => {
    await ui?.close();
    await airlock?.stop();
  });

  it('keeps the opened card in sight when its panel opens (Done column, 1280 px)', async () => {
    await page.goto(new URL(`#/board/${project.id}`, page.url()).href);
    const card = page.locator(`[data-testid=task-card][data-task-id="${doneId}"] .card`);
    await card.waitFor(LIVE);
    await card.focus();
    await page.keyboard.press('Enter');
    await expect.poll(() => page.getByTestId('task-detail').getAttribute('data-task-id'), LIVE).toBe(doneId);

    // Wait for the layout to settle: the panel is beside the board.
    await expect.poll(async () => (await page.getByTestId('task-detail').boundingBox())?.width ?? 0, LIVE).toBeGreaterThan(0);
    const board = (await page.getByTestId('kanban').boundingBox())!;
    const box = (await card.boundingBox())!;
    expect(await card.evaluate((el) => el === document.activeElement), 'the opened card keeps the focus').toBe(true);
    expect(
      { left: box.x >= board.x, right: box.x + box.width <= board.x + board.width + 1 },
      `the opened card spans ${Math.round(box.x)}–${Math.round(box.x + box.width)}px, the board shows ${Math.round(board.x)}–${Math.round(board.x + board.width)}px`,
    ).toEqual({ left: true, right: true });
  });
});
