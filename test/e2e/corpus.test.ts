/**
 * The web catalog with the real OperatorHub corpus (193 packages, BOSUN_CORPUS_DIR) served to a
 * manager as a CatalogSource: every package has its card, search finds well-known operators, and
 * filters narrow the count. Skipped, saying why, without the corpus.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningManager } from '../../src/manager/manager.js';
import type { IndexView } from '../../src/web/client/api.js';
import { launchBrowser } from '../support/browser.js';
import { serveCorpusCatalog, startTestManager } from '../integration/controllers/support.js';
import { eventually, freshNamespace } from '../integration/support.js';
import { checkedPage, clusterViewer, openCatalog, screenshot, signIn, violations } from './support.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
if (!corpus) {
  process.stderr.write(
    'test/e2e/corpus.test.ts skipped: BOSUN_CORPUS_DIR is not set (point it at shared/corpus/operatorhub-2021/upstream-community-operators)\n',
  );
}

describe.skipIf(!corpus)('the web catalog with the OperatorHub corpus', () => {
  let browser: Browser;
  let manager: RunningManager;
  // The corpus is served in a namespace of its own: its catalog is shown to a signed-in viewer.
  let viewer: Awaited<ReturnType<typeof clusterViewer>>;
  beforeAll(async () => {
    browser = await launchBrowser();
    manager = await startTestManager();
    viewer = await clusterViewer();
  });
  afterAll(async () => {
    await browser?.close();
    await manager?.stop();
    await viewer?.remove();
  });

  it(
    'shows a card for every package, finds etcd and prometheus, and narrows by filters',
    { timeout: 600_000 },
    async () => {
      const ns = await freshNamespace('web-corpus');
      const { config, served } = await serveCorpusCatalog(corpus!, ns, 'corpus');
      try {
        const base = `${manager.url!}/`;
        const catalog = `${ns}/corpus`;
        const index = await eventually(
          'the corpus packages in the web catalog',
          async () => {
            const res = await fetch(`${base}api/index`, {
              headers: { Authorization: `Bearer ${viewer.token}` },
            });
            const i = (await res.json()) as IndexView;
            const mine = i.packages.filter((p) => p.catalog === catalog);
            return mine.length > 0 ? mine : undefined;
          },
          300_000,
        );
        // Every package the PackageManifest projection keeps: OLM leaves out a package whose
        // channels have no single head (the corpus has one, hive-operator).
        const projected = manager.packages.visible('').filter((p) => p.catalog.namespace === ns);
        expect(index.length).toBe(projected.length);
        expect(index.length).toBeGreaterThan(config.packages.length - 3);

        const { page, problems, close } = await checkedPage(browser, base);
        const requested = new Set<string>();
        page.on('request', (r) => requested.add(r.url()));
        try {
          await openCatalog(page, `${base}#/?catalog=${encodeURIComponent(catalog)}`);
          await signIn(page, viewer.token);
          await expect.poll(() => page.locator('a.card').count()).toBe(index.length);
          const titles = await page.locator('a.card .title').allTextContents();
          expect(titles.filter((t) => t.trim() === '')).toEqual([]);
          expect(await page.textContent('#count')).toMatch(
            new RegExp(`^${index.length} (of \\d+ )?operators$`),
          );
          await screenshot(page, 'corpus-grid');

          await page.fill('#search', 'etcd');
          await expect
            .poll(() => page.locator('a.card').first().getAttribute('data-package'))
            .toBe(`${catalog}/etcd`);
          await page.fill('#search', 'prometheus');
          await expect
            .poll(() =>
              page.locator('a.card').evaluateAll((as) => as.map((a) => a.getAttribute('data-package'))),
            )
            .toContain(`${catalog}/prometheus`);
          await page.fill('#search', '');

          // A category, then a capability level: each narrows the count.
          const all = await page.locator('a.card').count();
          await page.check('input[data-key="category:Database"]');
          await expect.poll(() => page.locator('a.card').count()).toBeLessThan(all);
          const databases = await page.locator('a.card').count();
          expect(databases).toBeGreaterThan(0);
          await page.check('input[data-key="capability:Basic Install"]');
          await expect.poll(() => page.locator('a.card').count()).toBeLessThan(databases);

          await page.uncheck('input[data-key="capability:Basic Install"]');
          await page.uncheck('input[data-key="category:Database"]');
          await page.fill('#search', 'etcd');
          await page.click(`a.card[data-package="${catalog}/etcd"]`);
          await page.waitForSelector('#graph');
          expect(await page.locator('#graph g.node').count()).toBeGreaterThan(1);
          await screenshot(page, 'corpus-etcd');

          // Every icon the grid shows decodes as an image in the browser.
          const icons = index.flatMap((p) => (p.icon ? [p.icon] : []));
          expect(icons.length).toBeGreaterThan(index.length / 2);

          // Once the grid is up, the page fetches every icon in idle time (cards far down the grid
          // included), so that a search finds them parsed.
          await page.waitForSelector('body[data-icons-ready="true"]', { timeout: 120_000 });
          expect(icons.map((u) => new URL(u, base).href).filter((u) => !requested.has(u))).toEqual([]);
          const broken = await page.evaluate<string[]>(
            `Promise.all(${JSON.stringify(icons)}.map((u) => new Promise((done) => {
             const img = new Image();
             img.onload = () => done(img.naturalWidth > 0 ? '' : u);
             img.onerror = () => done(u);
             img.src = u;
           }))).then((r) => r.filter(Boolean))`,
          );
          expect(broken).toEqual([]);

          expect(await violations(page)).toEqual([]);
          expect(problems).toEqual([]);
        } finally {
          await close();
        }
      } finally {
        served.close();
      }
    },
  );
});
