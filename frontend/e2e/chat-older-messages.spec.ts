// Found by a new-user test: the Chat screen loads the last 200 messages of
// a conversation and says "The last 200 of 230 messages." — with no way to
// read the others. Agents that talk a lot pass 200 messages in an
// afternoon, and the owner is meant to read every conversation: the start
// of it (what was asked, by whom) is exactly what gets cut.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Page } from 'playwright-core';
import { callJson, connectAgent, openUi, rpc, startAirlock, type Airlock, type Browser } from './harness';

const LIVE = { timeout: 15_000 };
const COUNT = 230;

interface Project { id: string }
interface CreatedAgent { agent: { id: string }; token: string }

describe('a long conversation on the Chat screen', () => {
  let airlock: Airlock;
  let ui: Browser;
  let page: Page;
  let lead: Client | undefined;
  let conversationId = '';

  beforeAll(async () => {
    airlock = await startAirlock();
    ui = await openUi(airlock);
    page = ui.page;
    const project = await rpc<Project>(page, 'Agents.CreateProject', 'website', '');
    const manager = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'lead', kind: 'manager', human: false, parent: '', role: '', projects: [project.id], compact: false });
    const scout = await rpc<CreatedAgent>(page, 'Agents.Create', { name: 'scout', kind: 'worker', human: false, parent: manager.agent.id, role: '', projects: [project.id], compact: false });
    lead = await connectAgent(airlock, manager.token, { purpose: 'chat', project: project.id }, 'lead-chat');
    const started = await callJson<{ conversation_id: string }>(lead, 'start_conversation', {
      participant_id: scout.agent.id, topic: 'The launch plan', initial_message: 'message 1: what we agreed to ship first',
    });
    conversationId = started.conversation_id;
    for (let i = 2; i <= COUNT; i++) {
      await callJson(lead, 'send_message', { target_agent_id: scout.agent.id, conversation_id: conversationId, content: `message ${i}` });
    }
  });

  afterAll(async () => {
    await lead?.close().catch(() => {});
    await ui?.close();
    await airlock?.stop();
  });

  it('lets the owner read back to the first message', async () => {
    await page.goto(new URL(`#/chat/${conversationId}`, page.url()).href);
    const messages = page.getByTestId('messages');
    await expect.poll(() => page.getByTestId('message').count(), LIVE).toBeGreaterThan(0);
    await expect.poll(() => messages.textContent(), LIVE).toContain(`message ${COUNT}`);

    // The reader scrolls to the top, and takes the way to older messages the screen offers there.
    await messages.evaluate((el) => (el.scrollTop = 0));
    const older = messages.getByRole('button', { name: /older|earlier|more|all/i });
    if (await older.count()) await older.first().click();
    await expect
      .poll(() => page.getByTestId('message-content').filter({ hasText: /^message 1: / }).count(), {
        ...LIVE,
        message: `the first of ${COUNT} messages never shows; the screen says: ${await messages.locator('.older').textContent().catch(() => '')}`,
      })
      .toBe(1);
  });
});
