// Found by a new-user test: a Board card's priority label is the only place
// the card says its priority, in 10.5 px capitals; "low" is drawn in the
// faint grey (#9a9aa4 on white, 2.8:1 in the light scheme; 3.6:1 in the
// dark one), below the 4.5:1 WCAG AA asks of small text. On a board full
// of cards it reads as blank.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openUi, rpc, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 15_000 };

interface Project { id: string }

describe('priority labels on Board cards', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let project: Project;

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    for (const priority of ['low', 'medium', 'high', 'urgent']) {
      await rpc(page, 'Board.Create', project.id, {
        localId: '', title: `A ${priority} task`, description: '', priority, status: 'todo', assigneeId: '', parentTaskId: '', dependsOn: [],
      });
    }
  });

  afterAll(async () => {
    await ui?.close();
    await airlock?.stop();
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`are readable in the ${scheme} scheme (WCAG AA, 4.5:1)`, async () => {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(new URL(`#/board/${project.id}`, page.url()).href);
      await expect.poll(() => page.getByTestId('task-card').count(), LIVE).toBe(4);
      const ratios = await page.getByTestId('task-priority').evaluateAll((labels) => {
        const rgb = (c: string) => c.match(/[\d.]+/g)!.slice(0, 3).map(Number);
        const lum = (c: number[]) => {
          const [r, g, b] = c.map((v) => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4);
          return 0.2126 * r + 0.7152 * g + 0.0722 * b;
        };
        const background = (el: Element | null): string => {
          for (; el; el = el.parentElement) {
            const c = getComputedStyle(el).backgroundColor;
            if (!/rgba\(.*, 0\)$/.test(c) && c !== 'transparent') return c;
          }
          return 'rgb(255, 255, 255)';
        };
        return Object.fromEntries(labels.map((el) => {
          const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(rgb(background(el)))].sort((x, y) => y - x);
          return [el.textContent!.trim(), Math.round(((a + 0.05) / (b + 0.05)) * 100) / 100];
        }));
      });
      const low = Object.entries(ratios).filter(([, r]) => r < 4.5);
      expect(low, `contrast of each priority label: ${JSON.stringify(ratios)}`).toEqual([]);
    });
  }
});
