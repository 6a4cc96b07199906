// Found by a new-user test: in a 900 px window, opening a request's detail
// on the Activity screen squeezes the table to Time, Agent and a clipped
// Server column: which request each row is, its decision and its result
// are out of sight to the right (the screen means to keep "the decision
// and the result in view" in a narrow window), so picking the next row to
// look at is guesswork.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { callJson, connectClient, openUi, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 15_000 };

describe('the Activity screen in a narrow window', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let client: Client | undefined;

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    await page.setViewportSize({ width: 900, height: 800 });
    client = await connectClient(airlock);
    await callJson(client, 'help');
    await callJson(client, 'help', { tool_name: 'get_my_tasks' });
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    await ui?.close();
    await airlock?.stop();
  });

  it('keeps each row\'s request and decision in view with a detail open', async () => {
    await page.getByRole('link', { name: 'Activity' }).click();
    const rows = page.getByTestId('activity-row');
    await expect.poll(() => rows.count(), LIVE).toBeGreaterThanOrEqual(2);
    await rows.first().click();
    await expect.poll(() => rows.first().getAttribute('class'), LIVE).toContain('selected');

    const row = rows.nth(1);
    const wrap = (await row.evaluate((tr) => {
      const w = tr.closest('.table-wrap') ?? tr.closest('table')!.parentElement!;
      const r = w.getBoundingClientRect();
      return { left: r.left, right: r.right };
    }))!;
    const hidden: string[] = [];
    const cells = row.locator('td');
    const headers = await page.locator('thead th').allTextContents();
    for (let i = 0; i < (await cells.count()); i++) {
      const cell = cells.nth(i);
      if (!(await cell.isVisible())) continue; // a column the narrow layout leaves out on purpose
      const b = (await cell.boundingBox())!;
      if (b.x + b.width > wrap.right + 1) hidden.push(headers[i]);
    }
    expect(hidden, 'columns past the right edge of the table, out of sight').toEqual([]);
  });
});
