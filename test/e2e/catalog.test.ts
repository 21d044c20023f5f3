/**
 * The web catalog in headless Chromium, served by a real manager against the run's control plane:
 * search and filters, a package page, its Subscription copied and applied with the real kubectl
 * until the operator is installed, the installed and upgrade-available badges following the
 * cluster, and a malicious package rendered inert.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterServiceVersion, InstallPlan } from '../../src/apis/operators.js';
import type { RunningManager } from '../../src/manager/manager.js';
import type { IndexView } from '../../src/web/client/api.js';
import { MaxDescriptionChars } from '../../src/web/markdown.js';
import { launchBrowser } from '../support/browser.js';
import { tempDir } from '../support/temp-dir.js';
import {
  catalogSource,
  ConfigMapResource,
  create,
  get,
  list,
  mergePatch,
  Resources,
  startTestManager,
} from '../integration/controllers/support.js';
import { eventually, freshNamespace } from '../integration/support.js';
import {
  checkedPage,
  clusterViewer,
  kubectl,
  openCatalog,
  publish,
  screenshot,
  serveFromConfigMap,
  signIn,
  updateConfigMap,
  violations,
  waitReady,
} from './support.js';

let browser: Browser;
let manager: RunningManager;
let base: string;
/** A viewer who may see every namespace's catalogs and installs (the catalogs here are namespaces'). */
let viewer: Awaited<ReturnType<typeof clusterViewer>>;

beforeAll(async () => {
  browser = await launchBrowser();
  manager = await startTestManager();
  base = `${manager.url!}/`;
  viewer = await clusterViewer();
});
afterAll(async () => {
  await browser?.close();
  await manager?.stop();
  await viewer?.remove();
});

/** Waits until the manager's web API lists the package (the catalog projected into the PackageIndex). */
async function listed(id: string): Promise<void> {
  await eventually(`${id} in the web catalog`, async () => {
    const res = await fetch(`${base}api/index`, { headers: { Authorization: `Bearer ${viewer.token}` } });
    const index = (await res.json()) as IndexView;
    return index.packages.some((p) => p.id === id) ? true : undefined;
  });
}

const UiTimeout = 120_000;

describe('the web catalog against a cluster', () => {
  it('searches, filters, opens a package, and installs it by applying the copied Subscription; badges follow the cluster', async () => {
    const ns = await freshNamespace('web');
    const dir = await tempDir('bosun-web-catalog-');
    await publish(dir, 'bosun-sample/0.1.0', 'bosun-sample/0.1.1', 'bosun-sample-dashboard/0.1.0');
    await serveFromConfigMap(ns, 'samples', dir);
    const sampleId = `${ns}/samples/bosun-sample`;
    await listed(sampleId);
    const card = `a.card[data-package="${sampleId}"]`;

    const { page, problems, close } = await checkedPage(browser, base);
    try {
      await openCatalog(page, base);
      expect(await page.title()).toBe('Operator catalog · Bosun');

      // A namespace's catalog is not everyone's: the page shows it once signed in, with a token
      // whose user may list that namespace's catalogs.
      await page.fill('#search', 'widgets');
      await expect.poll(() => page.locator(card).count()).toBe(0);
      await page.fill('#search', '');
      await signIn(page, viewer.token);
      expect(await page.textContent('#signed-in-as')).toBe(`Signed in as ${viewer.user}`);
      expect(await page.locator('#session-token').count()).toBe(0);

      // Search as you type: a keyword of the sample operator, then a word nothing has.
      await page.fill('#search', 'widgets');
      await page.waitForSelector(card);
      await page.fill('#search', 'no-operator-is-called-this');
      await expect.poll(() => page.locator('a.card').count()).toBe(0);
      expect(await page.isVisible('#empty')).toBe(true);
      expect(await page.textContent('#count')).toMatch(/^0 of \d+ operators$/);
      await page.fill('#search', '');

      // Filter by this test's catalog: exactly its two packages; then the text narrows to one.
      await page.check(`input[data-key="catalog:${ns}/samples"]`);
      await expect.poll(() => page.locator('a.card').count()).toBe(2);
      // "2 operators" alone when no other catalog is in the cluster.
      expect(await page.textContent('#count')).toMatch(/^2 (of \d+ )?operators$/);
      // The address keeps the query (a moment after the last change), so it can be shared.
      await expect.poll(() => page.url()).toContain(`catalog=${encodeURIComponent(`${ns}/samples`)}`);
      await page.fill('#search', 'dashboard');
      await expect.poll(() => page.locator('a.card').count()).toBe(1);
      expect(await page.getAttribute('a.card', 'data-package')).toBe(`${ns}/samples/bosun-sample-dashboard`);
      await page.fill('#search', 'widgets');
      await expect.poll(() => page.locator('a.card').count()).toBe(1);
      await screenshot(page, 'grid');

      // The package page, opened from its card.
      await page.click(card);
      await page.waitForSelector('#graph');
      expect(await page.textContent('h1')).toBe('Bosun Sample Operator');
      expect(await page.textContent('.description')).toContain('keeps Widgets');
      expect(await page.getAttribute('img.icon.big', 'alt')).toBe('Bosun Sample Operator logo');
      expect(
        await page.locator('#graph g.node').evaluateAll((gs) => gs.map((g) => g.getAttribute('data-bundle'))),
      ).toEqual(['bosun-sample.v0.1.1', 'bosun-sample.v0.1.0']);
      expect(await page.locator('#graph path.edge.replaces').count()).toBe(1);
      expect(await page.textContent('#graph g.node.head')).toContain('0.1.1');
      expect(await page.textContent('section[aria-labelledby="h-apis"]')).toContain(
        'widgets.sample.bosun.dev',
      );

      // The catalog is not global, so the page proposes its namespace; Manual approval chosen.
      expect(await page.inputValue('#install-namespace')).toBe(ns);
      await page.selectOption('#install-approval', 'Manual');
      const yaml = (await page.textContent('#install-yaml')) ?? '';
      expect(yaml).toContain('kind: OperatorGroup');
      expect(yaml).toContain('installPlanApproval: Manual');
      expect(yaml).not.toContain('kind: Namespace'); // it exists
      await page.click('#copy');
      await page.waitForSelector('#copied:has-text("Copied.")');
      const copied = await page.evaluate<string>('navigator.clipboard.readText()');
      expect(copied).toBe(yaml);

      const applied = await kubectl(['apply', '-f', '-'], copied);
      expect(applied.stderr).toBe('');
      expect(applied.code).toBe(0);
      expect(applied.stdout).toContain(`operatorgroup.operators.coreos.com/${ns} created`);
      expect(applied.stdout).toContain('subscription.operators.coreos.com/bosun-sample created');

      // Manual: the first install waits for approval, and the page says so.
      await page.waitForSelector('#pkg-badges .badge.approval', { timeout: UiTimeout });
      const firstPlan = await eventually('the InstallPlan waiting for approval', async () => {
        const [p] = await list<InstallPlan>(Resources.InstallPlan, ns);
        return p?.status?.phase === 'RequiresApproval' ? p : undefined;
      });
      await mergePatch(Resources.InstallPlan, ns, firstPlan.metadata.name!, { spec: { approved: true } });
      await eventually(
        'bosun-sample.v0.1.1 to be Succeeded',
        async () => {
          const c = await get<ClusterServiceVersion>(
            Resources.ClusterServiceVersion,
            ns,
            'bosun-sample.v0.1.1',
          );
          return c?.status?.phase === 'Succeeded' ? c : undefined;
        },
        UiTimeout,
      );
      await page.waitForSelector('#pkg-badges .badge.installed', { timeout: UiTimeout });
      const row = page.locator(`#pkg-installs tr[data-namespace="${ns}"]`);
      await expect.poll(() => row.textContent(), { timeout: UiTimeout }).toContain('Succeeded');
      expect(await row.textContent()).toContain('0.1.1');
      expect(await page.getAttribute('#graph g.node[data-bundle="bosun-sample.v0.1.1"]', 'class')).toContain(
        'installed',
      );
      // Installed now, so the namespace has an OperatorGroup: the page no longer adds one.
      expect(await page.textContent('#install-yaml')).not.toContain('kind: OperatorGroup');

      // A newer version published into the catalog: an upgrade, waiting for approval.
      await publish(dir, 'bosun-sample/0.2.1');
      await updateConfigMap(ns, 'samples', dir);
      await page.waitForSelector('#pkg-badges .badge.upgrade', { timeout: UiTimeout });
      await expect
        .poll(() => row.textContent(), { timeout: UiTimeout })
        .toContain('0.2.1 (waits for approval)');
      await page.waitForSelector('#graph g.node[data-bundle="bosun-sample.v0.2.1"]', { timeout: UiTimeout });
      await screenshot(page, 'package');

      // Back on the grid, the card says the same.
      await page.click('nav.crumbs a');
      await page.waitForSelector(`${card} .badge.installed`);
      expect(await page.textContent(`${card} .badges`)).toContain('Upgrade available');
      expect(await page.textContent(`${card} .badges`)).toContain('Waits for approval');
      expect(await page.inputValue('#search')).toBe('widgets');

      expect(await violations(page)).toEqual([]);
      expect(problems).toEqual([]);
    } finally {
      await close();
    }
  });

  it('renders a malicious package inert: no script runs, no javascript: link, no event handler', async () => {
    const ns = await freshNamespace('web-evil');
    const pwn = (how: string) => `window.__pwned=${JSON.stringify(how)}`;
    const huge = 'A line of an enormous description, repeated to make it far too long to render. '.repeat(
      Math.ceil((MaxDescriptionChars * 3) / 80),
    );
    const description = [
      '# Evil operator',
      `<script>${pwn('script')}</script>`,
      `<img src=x onerror='${pwn('img onerror')}'>`,
      `<svg onload='${pwn('svg onload')}'><circle r="5"/></svg>`,
      `[markdown link](javascript:${pwn('markdown link')})`,
      `<a href="javascript:${pwn('html link').replace(/"/g, '&quot;')}">html link</a>`,
      '<a href=" JaVaScRiPt:window.__pwned=1">mixed case link</a>',
      `<div onclick='${pwn('onclick')}' onmouseover='${pwn('onmouseover')}'>hover me</div>`,
      `<iframe src="javascript:top.__pwned=1"></iframe>`,
      '<style>body { display: none }</style>',
      '<form action="javascript:window.__pwned=1"><button>go</button></form>',
      '<meta http-equiv="refresh" content="0;url=javascript:window.__pwned=1">',
      '<base href="https://evil.example/">',
      '![tracking pixel](https://evil.example/pixel.png)',
      huge,
    ].join('\n\n');
    const svgWithScript = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10" onload='${pwn('icon')}'><script>${pwn('icon script')}</script><rect width="10" height="10"/></svg>`,
    ).toString('base64');
    const docs = [
      {
        schema: 'olm.package',
        name: 'evil',
        defaultChannel: 'stable',
        icon: { base64data: svgWithScript, mediatype: 'image/svg+xml' },
      },
      { schema: 'olm.channel', package: 'evil', name: 'stable', entries: [{ name: 'evil.v1.0.0' }] },
      {
        schema: 'olm.bundle',
        package: 'evil',
        name: 'evil.v1.0.0',
        image: 'example.com/evil/bundle:v1.0.0',
        properties: [
          { type: 'olm.package', value: { packageName: 'evil', version: '1.0.0' } },
          {
            type: 'olm.csv.metadata',
            value: {
              displayName: `<img src=x onerror='${pwn('displayName')}'>Evil`,
              description,
              provider: {
                name: `<b onmouseover='${pwn('provider')}'>Evil Corp</b>`,
                url: `javascript:${pwn('provider url')}`,
              },
              links: [
                { name: 'docs', url: `javascript:${pwn('link')}` },
                { name: 'data', url: 'data:text/html,<script>alert(1)</script>' },
              ],
              maintainers: [
                { name: '<script>alert(1)</script>', email: `"><img src=x onerror='${pwn('email')}'>@x` },
              ],
              keywords: ['<script>alert(1)</script>'],
              annotations: {
                description: `<img src=x onerror='${pwn('short description')}'> short`,
                categories: `<img src=x onerror='${pwn('category')}'>`,
                capabilities: 'Basic Install',
                containerImage: `"><script>${pwn('image')}</script>`,
              },
              installModes: [{ type: 'AllNamespaces', supported: true }],
            },
          },
        ],
      },
    ];
    await create(ConfigMapResource, ns, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'evil' },
      data: { 'catalog.json': docs.map((d) => JSON.stringify(d)).join('\n') },
    } as never);
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'evil', { sourceType: 'configmap', configMap: 'evil' }),
    );
    await waitReady(ns, 'evil');
    const id = `${ns}/evil/evil`;
    await listed(id);

    const { page, problems, close } = await checkedPage(browser, base);
    try {
      await openCatalog(page, base);
      await signIn(page, viewer.token);
      await openCatalog(page, `${base}#/?q=evil&catalog=${encodeURIComponent(`${ns}/evil`)}`);
      await page.waitForSelector(`a.card[data-package="${id}"]`);
      expect(await page.textContent(`a.card[data-package="${id}"] .title`)).toBe(
        `<img src=x onerror='${pwn('displayName')}'>Evil`,
      );
      await page.click(`a.card[data-package="${id}"]`);
      await page.waitForSelector('.description');
      expect(await page.textContent('h1')).toBe(`<img src=x onerror='${pwn('displayName')}'>Evil`);
      expect(await page.textContent('.description')).toContain('hover me');
      expect(await page.textContent('#h-desc ~ .note')).toContain('was cut');
      await page.hover('text=hover me');
      await page.click('text=html link');
      await page.click('text=markdown link');

      const dom = await page.evaluate<{
        handlers: string[];
        scriptLinks: string[];
        scripts: string[];
        embedded: number;
        styles: number;
        descriptionChars: number;
      }>(`(() => {
        const all = [...document.querySelectorAll('*')];
        return {
          handlers: all.flatMap((e) => [...e.attributes].filter((a) => a.name.toLowerCase().startsWith('on')).map((a) => e.tagName + ' ' + a.name)),
          scriptLinks: all.flatMap((e) => ['href', 'src', 'action', 'formaction', 'xlink:href', 'data']
            .map((n) => e.getAttribute(n) ?? '')
            .filter((v) => /^\\s*(javascript|vbscript|data:text)/i.test(v))),
          scripts: [...document.scripts].map((s) => s.src),
          embedded: document.querySelectorAll('iframe, frame, object, embed, form, base, meta[http-equiv]').length,
          styles: document.querySelectorAll('style, [style]').length,
          descriptionChars: document.querySelector('.description').innerHTML.length,
        };
      })()`);
      expect(dom.handlers).toEqual([]);
      expect(dom.scriptLinks).toEqual([]);
      expect(dom.scripts).toEqual([`${base}assets/app.js`]);
      expect(dom.embedded).toBe(0);
      expect(dom.styles).toBe(0);
      expect(dom.descriptionChars).toBeLessThan(MaxDescriptionChars * 2);
      // The links and provider URL that are not http(s) or mailto are not links at all.
      expect(await page.locator('.details a', { hasText: 'docs' }).count()).toBe(0);
      expect(await page.locator('.pkg-meta a').count()).toBe(0);
      // The remote image is a link, so the page fetched nothing from evil.example.
      expect(await page.getAttribute('.description a:has-text("tracking pixel")', 'href')).toBe(
        'https://evil.example/pixel.png',
      );
      // The SVG icon with a script is shown as an image, where scripts never run.
      expect(
        await page
          .locator('img.icon.big')
          .evaluate((img) => (img as unknown as { naturalWidth: number }).naturalWidth),
      ).toBeGreaterThan(0);

      expect(await page.evaluate('window.__pwned')).toBeUndefined();
      expect(await violations(page)).toEqual([]);
      expect(problems).toEqual([]);
      await screenshot(page, 'malicious-package', { fullPage: false });
    } finally {
      await close();
    }
  });
});
