// Found by a new-user test: one task assigned to an agent with a long name
// (names may be 64 characters) widens every column of the Board to its
// maximum, so at 1280 px only Backlog, To do and part of In progress show;
// Blocked and Done are off to the right. The agent chip's name does not
// wrap (it ends in an ellipsis), but its full width still counts toward the
// card's smallest width, and so the column's.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openUi, rpc, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 15_000 };

interface Project { id: string }
interface CreatedAgent { agent: { id: string } }

describe('the Board with an agent whose name is long', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
  });

  afterAll(async () => {
    await ui?.close();
    await airlock?.stop();
  });

  it('still shows every column at 1280 px', async () => {
    const project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    const agent = await rpc<CreatedAgent>(page, 'Agents.Create', {
      name: 'frontend-implementation-specialist-agent-number-seven', kind: 'worker', human: false, parent: '', role: '', projects: [project.id], compact: false,
    });
    await rpc(page, 'Board.Create', project.id, {
      localId: '', title: 'Fix the footer', description: '', priority: 'medium', status: 'todo', assigneeId: agent.agent.id, parentTaskId: '', dependsOn: [],
    });
    await page.goto(new URL(`#/board/${project.id}`, page.url()).href);
    await page.getByTestId('task-card').waitFor(LIVE);

    const board = (await page.getByTestId('kanban').boundingBox())!;
    const done = (await page.locator('[data-testid=board-column][data-status=done]').boundingBox())!;
    expect(done.x + done.width, `the Done column ends at ${done.x + done.width}px, the board's visible area at ${board.x + board.width}px`)
      .toBeLessThanOrEqual(board.x + board.width);
  });
});
