// A real browser for the report tests: Debian's chromium (installed by .ci/run) driven by playwright-core,
// headless, no sandbox (CI runs as root), nothing that phones home, and a fresh profile per launch.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

export interface OpenedPage {
  readonly page: Page;
  /** console errors and uncaught page errors */
  readonly errors: string[];
  /** every URL the page requested (the document, scripts, sockets…) */
  readonly requests: string[];
}

export interface TestBrowser {
  open(url: string, options?: { readonly waitUntil?: 'load' | 'domcontentloaded' }): Promise<OpenedPage>;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<TestBrowser> {
  const profile = mkdtempSync(join(tmpdir(), 'kvs-chromium-'));
  const context: BrowserContext = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
    viewport: { width: 1100, height: 900 },
  });
  return {
    async open(url, options = {}) {
      const page = await context.newPage();
      const errors: string[] = [];
      const requests: string[] = [];
      page.on('console', (m) => {
        if (m.type() === 'error') errors.push(m.text());
      });
      page.on('pageerror', (e) => errors.push(String(e)));
      page.on('request', (r) => requests.push(r.url()));
      page.on('websocket', (ws) => requests.push(ws.url()));
      await page.goto(url, { waitUntil: options.waitUntil ?? 'load' });
      return { page, errors, requests };
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
