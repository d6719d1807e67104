import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/** Debian's chromium (installed by .ci/run); HISHO_CHROMIUM overrides the path. */
export const CHROMIUM = process.env.HISHO_CHROMIUM ?? '/usr/bin/chromium';
/** Screenshots are kept here (gitignored) as test artifacts. */
export const ARTIFACTS = path.resolve(__dirname, '..', '..', 'artifacts', 'screenshots');

/**
 * `describe` for browser tests: skipped only when HISHO_SKIP_BROWSER=1 is set explicitly (local iteration);
 * a missing chromium otherwise fails the run loudly instead of skipping silently.
 */
export const describeBrowser: jest.Describe = process.env.HISHO_SKIP_BROWSER === '1' ? describe.skip : describe;

export async function launchBrowser(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(
      `chromium not found at ${CHROMIUM}: install it (apt-get install -y chromium; .ci/run does) ` +
        'or set HISHO_SKIP_BROWSER=1 to skip browser tests',
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}
