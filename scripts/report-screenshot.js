#!/usr/bin/env node
// Screenshots an HTML report for the README (docs/report-seed.png): the verdict, the findings and the first two
// plots of `kvsentinel demo --report seed.html`, in Debian's chromium through playwright-core.
// Usage: report-screenshot.js REPORT.html OUT.png
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';

const [report, out] = process.argv.slice(2);
if (report === undefined || out === undefined) {
  process.stderr.write('usage: report-screenshot.js REPORT.html OUT.png\n');
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), 'kvs-shot-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
  ],
  viewport: { width: 960, height: 900 },
});
try {
  const page = await context.newPage();
  await page.goto(pathToFileURL(resolve(report)).href);
  // the README shows the story at a glance: evidence chips, the fixes list and the later sections stay in the file
  await page.addStyleTag({
    content:
      '.finding .evidence,.finding p.dim,#findings h3:not(.finding h3),#findings ol,#servers,#configuration,#plots figure:nth-of-type(n+3),#plots>p{display:none}',
  });
  await page.screenshot({ path: out, fullPage: true });
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
