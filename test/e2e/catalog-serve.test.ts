/**
 * The web catalog of `bosun catalog serve <dir>` (no cluster), in headless Chromium: the URL the
 * command prints is the page for a browser and the catalog for a CatalogSource.
 */
import { cp } from 'node:fs/promises';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.js';
import { tempDir } from '../support/temp-dir.js';
import { eventually } from '../integration/support.js';
import { repo } from '../unit/cli/run-bosun.js';
import { bosunProcess, checkedPage, openCatalog, screenshot, violations } from './support.js';

let browser: Browser;
beforeAll(async () => {
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
});

describe('bosun catalog serve', () => {
  it('shows the directory`s packages to a browser and tells how to install them, while / stays the catalog', async () => {
    const dir = join(await tempDir('bosun-web-serve-'), 'samples');
    await cp(join(repo, 'catalogs/bosun-samples'), dir, { recursive: true });
    const serve = bosunProcess(['catalog', 'serve', dir, '--addr', '127.0.0.1:0']);
    try {
      const url = await eventually('the URL on the first line', async () =>
        serve.out().includes('\n') ? serve.out().split('\n')[0] : undefined,
      );
      expect(serve.err()).toContain('or open it in a browser to browse the catalog');

      const { page, problems, close } = await checkedPage(browser, url);
      try {
        await openCatalog(page, url);
        expect(await page.textContent('#where')).toBe('catalog directory samples');
        await expect.poll(() => page.locator('a.card').count()).toBe(2);
        // Every image says what it is, or says it is decoration (alt="") beside its text.
        expect(await page.locator('img:not([alt])').count()).toBe(0);

        // By keyboard alone: "/" to the search box, type, Tab to the card, Enter opens it.
        await page.keyboard.press('/');
        expect(await page.evaluate<string>('document.activeElement.id')).toBe('search');
        await page.keyboard.type('dashboard');
        await expect.poll(() => page.locator('a.card').count()).toBe(1);
        await page.keyboard.press('Tab');
        expect(await page.evaluate<string>('document.activeElement.dataset.package')).toBe(
          'samples/bosun-sample-dashboard',
        );
        await page.keyboard.press('Enter');
        await page.waitForSelector('#graph');
        // The new page's heading has the focus, so a screen reader starts there.
        expect(await page.evaluate<string>('document.activeElement.tagName')).toBe('H1');
        expect(await page.textContent('h1')).toBe('Bosun Sample Dashboard');
        // The dashboard needs the sample operator's Widget API.
        expect(await page.textContent('section[aria-labelledby="h-apis"]')).toContain(
          'widgets.sample.bosun.dev',
        );

        // No cluster here: the install starts with the CatalogSource that reads this server.
        expect(await page.inputValue('#install-namespace')).toBe('operators');
        const yaml = (await page.textContent('#install-yaml')) ?? '';
        expect(yaml).toContain(
          `kind: CatalogSource\nmetadata:\n  name: samples\n  namespace: olm\nspec:\n  sourceType: http\n  address: "${url}"`,
        );
        expect(yaml).toContain('kind: Subscription');
        await page.fill('#install-namespace', 'Not A Namespace');
        expect(await page.textContent('#install-ns-problem')).toContain('lower-case');
        expect(await page.isDisabled('#copy')).toBe(true);
        await page.fill('#install-namespace', 'dashboards');
        expect(await page.textContent('#install-yaml')).toContain('kind: OperatorGroup');
        await page.click('#copy');
        expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(
          await page.textContent('#install-yaml'),
        );
        await screenshot(page, 'serve-package');

        expect(await violations(page)).toEqual([]);
        expect(problems).toEqual([]);
      } finally {
        await close();
      }

      // What a CatalogSource reads at the same URL is still the catalog.
      const fbc = await fetch(url);
      expect(fbc.headers.get('content-type')).toBe('application/json');
      expect(await fbc.text()).toContain('"schema": "olm.package"');
    } finally {
      serve.child.kill('SIGTERM');
    }
  });
});
