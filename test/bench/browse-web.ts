/**
 * The web catalog's figures, measured in headless Chromium against a running server (a manager
 * or `bosun catalog serve`) at `baseUrl`; called by the browse suite. Not a suite of its own.
 *
 * - `web_first_load_ms`: from navigation to a usable grid (the page's `bosun:ready` mark, set once
 *   the cards are in the DOM), with an empty cache each time: the HTML, its modules, the
 *   stylesheet and the index all fetched. Median of several loads, the slowest in the inputs.
 * - `web_icons_ready_ms`: from navigation until the page has downloaded and decoded every icon in
 *   idle time (its `bosun:icons-ready` mark), so that a search finds them parsed.
 * - `web_search_ms`: one keystroke in the search box to the next frame, typing well-known names
 *   letter by letter (every prefix is a search, as when a person types), once the icons are
 *   ready. Median and 95th percentile over all keystrokes. `web_search_early_ms`: the same typed
 *   as soon as the grid is up, while the page is still fetching icons.
 * - `web_index_bytes`: the size of the index the page loads first.
 */
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../support/browser.js';
import type { Emit } from './run.js';
import { median, quantile, round } from './support.js';

const Loads = 7;
const Typed = ['etcd', 'prometheus', 'database', 'kafka', 'cert manager', 'operator'];

export async function webFigures(emit: Emit, baseUrl: string): Promise<void> {
  const base = baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`;
  const index = await fetch(`${base}api/index`);
  const indexBytes = (await index.arrayBuffer()).byteLength;
  const browser: Browser = await launchBrowser();
  try {
    const loads: number[] = [];
    let packages = 0;
    for (let i = 0; i < Loads; i++) {
      // A new context is a new profile: nothing cached from the load before.
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      await page.goto(base);
      await page.waitForSelector('body[data-ready="true"]');
      loads.push(await page.evaluate<number>(`performance.getEntriesByName('bosun:ready')[0].startTime`));
      packages = await page.locator('a.card').count();
      await context.close();
    }
    emit({
      name: 'web_first_load_ms',
      value: round(median(loads)),
      unit: 'ms',
      inputs: { packages, loads: Loads, slowest_ms: round(Math.max(...loads)), browser: browser.version() },
    });

    const early = await typeInPage(browser, base, false);
    const late = await typeInPage(browser, base, true);
    emit({
      name: 'web_icons_ready_ms',
      value: round(late.iconsReadyMs!),
      unit: 'ms',
      inputs: { packages },
    });
    for (const [name, { times }, typed] of [
      ['web_search_ms', late, 'once the icons were ready'],
      ['web_search_early_ms', early, 'as soon as the grid was up'],
    ] as const) {
      emit({
        name,
        value: round(median(times)),
        unit: 'ms',
        inputs: {
          packages,
          keystrokes: times.length,
          p95_ms: round(quantile(times, 0.95)),
          slowest_ms: round(Math.max(...times)),
          words: Typed.join(', '),
          typed,
        },
      });
    }
    emit({ name: 'web_index_bytes', value: indexBytes, unit: 'bytes', inputs: { packages } });
  } finally {
    await browser.close();
  }
}

/** Types the words in a fresh page, right when the grid is up or once its icons are ready. */
async function typeInPage(
  browser: Browser,
  base: string,
  afterIcons: boolean,
): Promise<{ times: number[]; iconsReadyMs?: number }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  try {
    const page = await context.newPage();
    await page.goto(base);
    await page.waitForSelector('body[data-ready="true"]');
    let iconsReadyMs: number | undefined;
    if (afterIcons) {
      await page.waitForSelector('body[data-icons-ready="true"]', { timeout: 60_000 });
      iconsReadyMs = await page.evaluate<number>(
        `performance.getEntriesByName('bosun:icons-ready')[0].startTime`,
      );
    }
    // Typed in the page itself, so the figure is the page's work and not the test driver's.
    const times = await page.evaluate<number[]>(
      `(async (words) => {
        const input = document.getElementById('search');
        const frame = () => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
        const out = [];
        for (const word of words) {
          for (let n = 1; n <= word.length; n++) {
            const t0 = performance.now();
            input.value = word.slice(0, n);
            input.dispatchEvent(new Event('input', { bubbles: true }));
            await frame();
            out.push(performance.now() - t0);
          }
          input.value = '';
          input.dispatchEvent(new Event('input', { bubbles: true }));
          await frame();
        }
        return out;
      })(${JSON.stringify(Typed)})`,
    );
    return { times, ...(iconsReadyMs !== undefined ? { iconsReadyMs } : {}) };
  } finally {
    await context.close();
  }
}
