// Found by a new-user test: in a task's detail, "Ask scout about it"
// replaces itself with a message box, but the focus is not put there: the
// button it was on is gone, so the focus falls to the page's <body>. A
// keyboard user has to Tab from the top of the window to reach the box
// (and Escape, pressed there, closes the whole task instead).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openUi, rpc, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 15_000 };

interface Project { id: string }
interface CreatedAgent { agent: { id: string } }
interface Card { id: string }

describe('asking the assignee about a task, by keyboard', () => {
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

  it('puts the focus in the message box it opens', async () => {
    const project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    const scout = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'scout', kind: 'worker', human: false, parent: '', role: '', projects: [project.id], compact: false });
    const task = await rpc<Card>(page, 'Board.Create', project.id, {
      localId: '', title: 'Fix the footer', description: '', priority: 'medium', status: 'todo', assigneeId: scout.agent.id, parentTaskId: '', dependsOn: [],
    });
    await page.goto(new URL(`#/board/${project.id}/${task.id}`, page.url()).href);
    const ask = page.getByTestId('ask-assignee');
    await ask.waitFor(LIVE);
    await ask.focus();
    await page.keyboard.press('Enter');
    await page.getByTestId('ask-form').waitFor(LIVE);

    const focused = await page.evaluate(() => {
      const a = document.activeElement;
      return a?.closest('[data-testid=ask-form]') ? 'in the ask form' : `${a?.tagName.toLowerCase()} (outside the ask form)`;
    });
    expect(focused).toBe('in the ask form');
  });
});
