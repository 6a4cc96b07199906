// Helpers for the Playwright specs: a real `airlock serve` per spec, a
// Chromium with a throwaway profile, and real MCP clients.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const here = dirname(fileURLToPath(import.meta.url));
export const repoRoot = resolve(here, '..', '..');
export const screenshotDir = join(here, 'screenshots');

/** The stdio entry point of @modelcontextprotocol/server-everything installed for the Go tests. */
export function everythingEntry(): string {
  const pkg = join(repoRoot, 'backend/testutil/mcpservers/node_modules/@modelcontextprotocol/server-everything');
  const entry = join(pkg, 'dist/index.js');
  if (!existsSync(entry)) {
    throw new Error(`${entry} is missing: run \`npm ci --prefix backend/testutil/mcpservers\` (go tool task test does it).`);
  }
  return entry;
}

/** The stdio entry point of @modelcontextprotocol/server-filesystem installed for the Go tests. */
export function filesystemEntry(): string {
  const entry = join(repoRoot, 'backend/testutil/mcpservers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
  if (!existsSync(entry)) {
    throw new Error(`${entry} is missing: run \`npm ci --prefix backend/testutil/mcpservers\` (go tool task test does it).`);
  }
  return entry;
}

export interface Airlock {
  uiUrl: string;
  mcpUrl: string;
  token: string;
  dataDir: string;
  output: () => string;
  stop: () => Promise<void>;
}

/** Starts `$AIRLOCK_BIN serve` on a free port with a fresh data directory. */
export async function startAirlock(): Promise<Airlock> {
  const bin = process.env.AIRLOCK_BIN;
  if (!bin) throw new Error('AIRLOCK_BIN is not set');
  const dataDir = mkdtempSync(join(tmpdir(), 'airlock-e2e-'));
  const child: ChildProcess = spawn(bin, ['serve', '--addr', '127.0.0.1:0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  let out = '';
  child.stdout!.on('data', (b) => (out += b));
  child.stderr!.on('data', (b) => (out += b));

  const found = () => {
    const ui = /Airlock UI:\s*(\S+)/.exec(out)?.[1];
    const mcp = /MCP endpoint:\s*(\S+)/.exec(out)?.[1];
    const token = /Agent token:\s*(\S+)/.exec(out)?.[1];
    return ui && mcp && token ? { ui, mcp, token } : null;
  };
  const started = Date.now();
  while (!found()) {
    if (child.exitCode !== null) throw new Error(`airlock serve exited with ${child.exitCode}:\n${out}`);
    if (Date.now() - started > 20_000) {
      child.kill('SIGKILL');
      throw new Error(`airlock serve printed no "Airlock UI:", "MCP endpoint:" and "Agent token:" lines within 20 s:\n${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const f = found()!;
  return {
    uiUrl: f.ui,
    mcpUrl: f.mcp,
    token: f.token,
    dataDir,
    output: () => out,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  close: () => Promise<void>;
}

/** Debian's Chromium with a fresh profile, opened on the UI link (whose token the page keeps in its localStorage). */
export async function openUi(airlock: Airlock): Promise<Browser> {
  const profile = mkdtempSync(join(tmpdir(), 'airlock-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
    viewport: { width: 1280, height: 800 },
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (err) => console.error('[page error]', err));
  await page.goto(airlock.uiUrl);
  await page.getByRole('navigation', { name: 'Main' }).waitFor();
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: join(screenshotDir, `${name}.png`) });
}

/** Screenshots in the light and the dark colour scheme (name-light.png, name-dark.png). */
export async function shots(page: Page, name: string): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await shot(page, `${name}-${scheme}`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

/**
 * A real MCP client connected to Airlock over Streamable HTTP with an agent
 * token: the one `airlock serve` printed (the agent "default"), or token.
 */
export async function connectClient(airlock: Airlock, name = 'e2e-agent', version = '1.0.0', token = airlock.token): Promise<Client> {
  const client = new Client({ name, version });
  const transport = new StreamableHTTPClientTransport(new URL(airlock.mcpUrl), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

/**
 * A real MCP client connected as one agent with its own token, in a task
 * or chat session of a project (the connection's ?purpose=…&project=…).
 */
export async function connectAgent(airlock: Airlock, token: string, session: { purpose: 'task' | 'chat'; project: string }, name = 'e2e-agent'): Promise<Client> {
  const url = new URL(airlock.mcpUrl);
  url.searchParams.set('purpose', session.purpose);
  url.searchParams.set('project', session.project);
  const client = new Client({ name, version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

/** Calls one of Airlock's own tools and returns its JSON answer; a refusal throws with its text. */
export async function callJson<T = Record<string, unknown>>(client: Client, name: string, args: Record<string, unknown> = {}): Promise<T> {
  const r = await client.callTool({ name, arguments: args });
  const text = resultText(r);
  if (r.isError) throw new Error(`${name} refused: ${text}`);
  // Notifications for the session may ride along as further content blocks; the answer is the structured content.
  if (r.structuredContent) return r.structuredContent as T;
  const first = (r.content as { type: string; text?: string }[])[0];
  return JSON.parse(first?.text ?? 'null') as T;
}

/** Calls the facade over HTTP from inside the page, with its token: setup steps that are not under test. */
export async function rpc<T>(page: Page, method: string, ...args: unknown[]): Promise<T> {
  return page.evaluate(
    async ({ method, args }) => {
      const res = await fetch(`/api/rpc/${method}`, {
        method: 'POST',
        credentials: 'omit',
        headers: { Authorization: `Bearer ${localStorage.getItem('airlock.uiToken')}` },
        body: JSON.stringify(args),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : null;
    },
    { method, args },
  ) as Promise<T>;
}

/** Text of an MCP tool result's text content blocks. */
export function resultText(result: unknown): string {
  const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
  return content.map((c) => c.text ?? '').join('\n');
}

/** The reason code Airlock put on a refused tool call (_meta["airlock/error"].code), or ''. */
export function refusalCode(result: unknown): string {
  const meta = (result as { _meta?: Record<string, { code?: string } | undefined> })._meta;
  return meta?.['airlock/error']?.code ?? '';
}

/** Waits until the server's tools are visible through Airlock's gateway. */
export async function waitForTool(client: Client, name: string, timeoutMs = 30_000): Promise<void> {
  const start = Date.now();
  for (;;) {
    const { tools } = await client.listTools();
    if (tools.some((t) => t.name === name)) return;
    if (Date.now() - start > timeoutMs) throw new Error(`tool ${name} never appeared; saw ${tools.map((t) => t.name).join(', ')}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}
