// Found by a new-user test: in a narrow window (900 px) the Agents screen
// puts the agent list above the agent's detail, but the list stays sticky
// at the top: scrolling down to read the detail (its tabs, the Run profile
// form) slides the detail underneath the list, which covers the agent's
// name and tabs, and more of the window the more agents there are.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { openUi, rpc, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 15_000 };

interface CreatedAgent { agent: { id: string } }

describe('the Agents screen in a narrow window', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    await page.setViewportSize({ width: 900, height: 800 });
  });

  afterAll(async () => {
    await ui?.close();
    await airlock?.stop();
  });

  it('scrolling to an agent\'s detail does not hide it under the agent list', async () => {
    let last = '';
    for (const name of ['scout', 'builder', 'reviewer', 'writer', 'tester']) {
      last = (await rpc<CreatedAgent>(page, 'Agents.Create', { name, kind: 'worker', human: false, parent: '', role: '', projects: [], compact: false })).agent.id;
    }
    await page.goto(new URL(`#/agents/${last}?tab=run`, page.url()).href);
    const detail = page.getByTestId('agent-detail');
    await expect.poll(() => detail.getAttribute('data-agent-id'), LIVE).toBe(last);

    // The reader scrolls down to the detail: its name, then its tabs.
    await detail.getByRole('heading', { name: 'tester' }).evaluate((el) => el.scrollIntoView({ block: 'start' }));
    const tab = detail.getByRole('tab', { name: 'Run profile' });
    const covered = await tab.evaluate((el) => {
      const r = el.getBoundingClientRect();
      const hit = document.elementFromPoint(r.left + 10, r.top + r.height / 2);
      return hit && !el.contains(hit) ? `${hit.tagName.toLowerCase()}.${hit.className} "${hit.textContent?.trim().replace(/\s+/g, ' ').slice(0, 40)}"` : '';
    });
    expect(covered, 'what covers the agent\'s Run profile tab').toBe('');
  });
});
