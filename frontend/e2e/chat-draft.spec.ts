// Found by a new-user test: a message half-written into one conversation
// is thrown away when the owner glances at another conversation and comes
// back: the composer starts empty for every conversation opened, also for
// the one the draft was written in. Chat apps (Slack, Claude, Cursor's
// chat) keep a draft per conversation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { callJson, connectAgent, openUi, rpc, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 15_000 };

interface Project { id: string }
interface CreatedAgent { agent: { id: string }; token: string }

describe('a draft on the Chat screen', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let lead: Client | undefined;
  const conversations: string[] = [];

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    const project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    const manager = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'lead', kind: 'manager', human: false, parent: '', role: '', projects: [project.id], compact: false });
    lead = await connectAgent(airlock, manager.token, { purpose: 'chat', project: project.id }, 'lead-chat');
    for (const name of ['scout', 'builder']) {
      const w = await rpc<CreatedAgent>(page, 'Agents.Create', { name, kind: 'worker', human: false, parent: manager.agent.id, role: '', projects: [project.id], compact: false });
      const c = await callJson<{ conversation_id: string }>(lead, 'start_conversation', { participant_id: w.agent.id, topic: `Plan with ${name}`, initial_message: `Hello ${name}` });
      conversations.push(c.conversation_id);
    }
  });

  afterAll(async () => {
    await lead?.close().catch(() => {});
    await ui?.close();
    await airlock?.stop();
  });

  it('is still there after a look at another conversation', async () => {
    const [first, second] = conversations;
    const open = async (id: string) => {
      await page.locator(`a[href="#/chat/${id}"]`).first().click();
      await expect.poll(() => page.getByTestId('conversation').getAttribute('data-conversation-id'), LIVE).toBe(id);
    };
    await page.getByRole('link', { name: 'Chat' }).click();
    await open(first);
    const box = page.getByTestId('conversation').getByRole('textbox');
    await box.fill('Scout, before you start: the pricing table needs a fourth tier for');

    await open(second);
    await open(first);
    expect(await page.getByTestId('conversation').getByRole('textbox').inputValue()).toBe('Scout, before you start: the pricing table needs a fourth tier for');
  });
});
