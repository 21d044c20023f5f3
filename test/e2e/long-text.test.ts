/**
 * The web catalog with names as long as a catalog can make them and no space to break at (a
 * 50,000-character provider, a 1 MB display name, 20,000-character keywords, 5,000-character
 * channel names, a 63-character package name): measured in headless Chromium, everything a card
 * or a column shows stays inside it, nothing paints over a neighbour, the page is no wider than
 * the window, and the page is never sent a megabyte name to lay out.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchBrowser } from '../support/browser.js';
import { LongText, writeLongTextCatalog } from '../support/long-text-catalog.js';
import { importedCorpus } from '../support/corpus-import.js';
import { tempDir } from '../support/temp-dir.js';
import { eventually } from '../integration/support.js';
import {
  bosunProcess,
  checkedPage,
  type CheckedPage,
  openCatalog,
  screenshot,
  violations,
} from './support.js';

let browser: Browser;
let serve: ReturnType<typeof bosunProcess>;
let url: string;
let catalog: string;

beforeAll(async () => {
  const dir = join(await tempDir('bosun-web-long-'), 'long');
  await writeLongTextCatalog(dir);
  serve = bosunProcess(['catalog', 'serve', dir, '--addr', '127.0.0.1:0']);
  url = await eventually('the URL on the first line', async () =>
    serve.out().includes('\n') ? serve.out().split('\n')[0] : undefined,
  );
  catalog = 'long';
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  serve?.child.kill();
});

interface Overflow {
  container: string;
  what: string;
  rect: number[];
  box: number[];
}

/**
 * Of everything painted inside each element matching `selector` (its text, images and form
 * controls), what lies outside that element's box, each rect first cut by the boxes of the
 * ancestors that clip it (overflow other than visible): so text an element clips or wraps counts
 * where it is painted, not where it would run. Given to the page as text: this program is compiled
 * without the DOM's types.
 */
function overflowsOf(page: Page, selector: string): Promise<Overflow[]> {
  return page.evaluate<Overflow[]>(
    `((selector) => {
      const tol = 1;
      const box = (r) => [r.left, r.top, r.right, r.bottom].map(Math.round);
      const cut = (a, b) => ({ left: Math.max(a.left, b.left), top: Math.max(a.top, b.top), right: Math.min(a.right, b.right), bottom: Math.min(a.bottom, b.bottom) });
      const empty = (r) => r.right - r.left <= 0 || r.bottom - r.top <= 0;
      const out = [];
      for (const container of document.querySelectorAll(selector)) {
        const c = container.getBoundingClientRect();
        const painted = [];
        const walker = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
        for (let t = walker.nextNode(); t; t = walker.nextNode()) {
          if (!t.textContent.trim()) continue;
          const range = document.createRange();
          range.selectNodeContents(t);
          painted.push([t.parentElement, range.getBoundingClientRect(), t.textContent.slice(0, 40)]);
        }
        for (const el of container.querySelectorAll('img, svg, input, select, button, pre, code, table'))
          painted.push([el, el.getBoundingClientRect(), '<' + el.tagName.toLowerCase() + '>']);
        for (const [el, rect, what] of painted) {
          // Not painted at all: in a closed <details>, hidden, or a card out of view that
          // content-visibility left unrendered.
          if (!el.checkVisibility({ contentVisibilityAuto: true })) continue;
          let r = rect;
          for (let a = el; a && a !== container.parentElement; a = a.parentElement) {
            const cs = getComputedStyle(a);
            if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') r = cut(r, a.getBoundingClientRect());
          }
          if (empty(r)) continue;
          if (r.left < c.left - tol || r.top < c.top - tol || r.right > c.right + tol || r.bottom > c.bottom + tol)
            out.push({ container: selector, what, rect: box(r), box: box(c) });
        }
      }
      return out;
    })(${JSON.stringify(selector)})`,
  );
}

/** Pairs of the elements matching `selector` whose boxes overlap. */
function overlapsOf(page: Page, selector: string): Promise<string[]> {
  return page.evaluate<string[]>(
    `((selector) => {
      const els = [...document.querySelectorAll(selector)];
      const rects = els.map((e) => e.getBoundingClientRect());
      const out = [];
      for (let i = 0; i < rects.length; i++)
        for (let j = i + 1; j < rects.length; j++) {
          const a = rects[i], b = rects[j];
          const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
          const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
          if (w > 1 && h > 1) out.push(i + ' and ' + j + ' of ' + selector);
        }
      return out;
    })(${JSON.stringify(selector)})`,
  );
}

/** The page's scrollable size against the window's. */
const pageSize = (page: Page) =>
  page.evaluate<{ width: number; height: number; windowWidth: number; windowHeight: number }>(
    '({ width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight, windowWidth: window.innerWidth, windowHeight: window.innerHeight })',
  );

async function withPage(run: (p: CheckedPage) => Promise<void>): Promise<void> {
  const checked = await checkedPage(browser, url);
  try {
    await checked.page.setViewportSize({ width: 1280, height: 1600 });
    await run(checked);
    expect(await violations(checked.page)).toEqual([]);
    expect(checked.problems).toEqual([]);
  } finally {
    await checked.close();
  }
}

describe('the web catalog with very long names', () => {
  it('keeps every card`s content inside the card, and no card over another', async () => {
    await withPage(async ({ page }) => {
      await openCatalog(page, url);
      await expect.poll(() => page.locator('a.card').count()).toBe(8);
      // Every card is in view, so none is left unrendered (content-visibility) and all are measured.
      expect(
        await page.evaluate<number>('document.querySelector("#grid").getBoundingClientRect().bottom'),
      ).toBeLessThan(1600);
      expect(await overflowsOf(page, '#grid > li')).toEqual([]);
      expect(await overlapsOf(page, '#grid > li')).toEqual([]);
      // The filters: each value within its column, the column beside the results, not over them.
      expect(await overflowsOf(page, '#filters')).toEqual([]);
      expect(await overlapsOf(page, '.catalog > *')).toEqual([]);
      const size = await pageSize(page);
      expect(size.width).toBeLessThanOrEqual(size.windowWidth);
      // A 1 MB display name wrapped in a card made the grid 1.8 million pixels tall; the eight
      // cards now fit the window.
      expect(size.height).toBeLessThanOrEqual(size.windowHeight);
      await screenshot(page, 'long-names-grid');
    });
  });

  it.each([LongText.provider, LongText.displayName, LongText.keywords, LongText.channels, LongText.name])(
    'keeps the package page of %s inside the window and each column to itself',
    async (name) => {
      await withPage(async ({ page }) => {
        await openCatalog(page, `${url}#/package/${catalog}/${name}`);
        await page.waitForSelector('#install-yaml');
        const size = await pageSize(page);
        expect(size.width).toBeLessThanOrEqual(size.windowWidth);
        for (const column of ['.pkg-head', '.pkg-main', '.pkg-side', '.crumbs'])
          expect(await overflowsOf(page, column)).toEqual([]);
        expect(await overlapsOf(page, '.pkg-body > *')).toEqual([]);
        // The install YAML still names the channel whole: it is what kubectl applies.
        if (name === LongText.channels)
          expect(await page.textContent('#install-yaml')).toContain(`channel: ${'s'.repeat(5_000)}`);
        await screenshot(page, `long-names-${name.slice(0, 20)}`, { fullPage: false });
      });
    },
  );

  it('sends the page no name longer than a card shows, so it never lays out a megabyte of one', async () => {
    const res = await fetch(new URL('api/index', url));
    const text = await res.text();
    const index = JSON.parse(text) as { packages: Record<string, unknown>[] };
    expect(index.packages).toHaveLength(8);
    for (const p of index.packages) {
      const labels = [
        p.displayName,
        p.provider,
        p.capability ?? '',
        ...(p.keywords as string[]),
        ...(p.categories as string[]),
      ];
      for (const label of labels) expect((label as string).length, String(p.name)).toBeLessThanOrEqual(200);
      expect((p.description as string).length).toBeLessThanOrEqual(280);
    }
    // The catalog's files hold 1.3 MB of these names; the index carries what the cards show
    // (channel names whole: the install snippet needs them).
    expect(text.length).toBeLessThan(50_000);
  });

  it('searches as the user types, matching the long names by what the card shows', async () => {
    await withPage(async ({ page }) => {
      await openCatalog(page, url);
      await page.fill('#search', 'mmmm');
      await expect.poll(() => page.locator('a.card').count()).toBe(1);
      expect(await page.getAttribute('a.card', 'data-package')).toBe(`${catalog}/${LongText.displayName}`);
      await page.fill('#search', 'wwww');
      await expect.poll(() => page.locator('a.card').count()).toBe(1);
      await page.fill('#search', '');
      await expect.poll(() => page.locator('a.card').count()).toBe(8);
      expect(await overflowsOf(page, '#grid > li')).toEqual([]);
    });
  });
});

// The same measures on the real OperatorHub corpus, imported and served as a directory.
const corpus = process.env.BOSUN_CORPUS_DIR;
const haveCorpus = !!corpus && existsSync(corpus);
if (!haveCorpus) {
  process.stderr.write(
    'test/e2e/long-text.test.ts: the corpus grid is skipped: set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators\n',
  );
}

describe.skipIf(!haveCorpus)('the web catalog with the OperatorHub corpus (BOSUN_CORPUS_DIR)', () => {
  it('keeps every card`s content inside its card, screen by screen', { timeout: 600_000 }, async () => {
    const { dir, ...imported } = await importedCorpus(corpus!);
    expect(imported.code, imported.stderr).toBe(0);
    const served = bosunProcess(['catalog', 'serve', dir, '--addr', '127.0.0.1:0']);
    try {
      const base = await eventually(
        'the URL on the first line',
        async () => (served.out().includes('\n') ? served.out().split('\n')[0] : undefined),
        120_000,
      );
      const checked = await checkedPage(browser, base);
      try {
        const { page } = checked;
        await page.setViewportSize({ width: 1280, height: 1600 });
        await openCatalog(page, base);
        const cards = await page.locator('a.card').count();
        expect(cards).toBeGreaterThan(150);
        const height = await page.evaluate<number>('document.documentElement.scrollHeight');
        for (let y = 0; y < height; y += 1200) {
          await page.evaluate(`window.scrollTo(0, ${y})`);
          await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
          expect(await overflowsOf(page, '#grid > li')).toEqual([]);
        }
        expect(await overlapsOf(page, '#grid > li')).toEqual([]);
        expect(await overflowsOf(page, '#filters')).toEqual([]);
        const size = await pageSize(page);
        expect(size.width).toBeLessThanOrEqual(size.windowWidth);
        expect(await violations(page)).toEqual([]);
        expect(checked.problems).toEqual([]);
      } finally {
        await checked.close();
      }
    } finally {
      served.child.kill();
    }
  });
});
