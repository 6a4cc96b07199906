// Found by a new-user test: the Board means to hold one card at a time in
// the tab order (arrow keys move between cards). In Chromium — the browser
// UI of `airlock serve` — each column whose list scrolls and holds no
// card in the tab order becomes a tab stop of its own (Chromium makes such
// scrollers focusable): Tab from the card goes through To do, In progress,
// Blocked and Done as whole columns, each drawn with a focus ring, where
// Enter does nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openUi, rpc, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 15_000 };

interface Project { id: string }
interface Card { id: string }

describe('Tab on the Board', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let project: Project;

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    // Enough cards in every column for its list to scroll.
    for (let i = 0; i < 12; i++) {
      for (const status of ['backlog', 'todo']) {
        await rpc<Card>(page, 'Board.Create', project.id, {
          localId: '', title: `Task ${status} ${i}`, description: '', priority: 'medium', status, assigneeId: '', parentTaskId: '', dependsOn: [],
        });
      }
    }
  });

  afterAll(async () => {
    await ui?.close();
    await airlock?.stop();
  });

  it('leaves the cards after one tab stop, not one per column', async () => {
    await page.goto(new URL(`#/board/${project.id}`, page.url()).href);
    await expect.poll(() => page.getByTestId('task-card').count(), LIVE).toBe(24);
    const first = page.locator('[data-testid=board-column][data-status=backlog] [data-testid=task-card] .card').first();
    await first.focus();
    await page.keyboard.press('Tab');
    const next = await page.evaluate(() => {
      const a = document.activeElement!;
      return a.closest('[data-testid=board-column]') && a.tagName === 'UL' ? `the ${a.getAttribute('aria-label')} list` : 'another control';
    });
    expect(next, 'what Tab reaches after the card in the tab order').toBe('another control');
  });
});
