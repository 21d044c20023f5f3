/**
 * The web catalog's routes over a real catalog directory (the sample catalog), through
 * `startCatalogServer` on loopback as `bosun catalog serve` runs it, and the handler itself.
 */
import { cp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DefaultGlobalNamespace } from '../../../src/manager/defaults.js';
import { startCatalogServer, type CatalogServer } from '../../../src/server/catalog-http.js';
import { loadServedCatalog } from '../../../src/catalog/serve.js';
import type { IndexView, PackageDetail } from '../../../src/web/client/api.js';
import { ContentSecurityPolicy, type WebCatalog, wantsHtml, webCatalog } from '../../../src/web/server.js';
import { catalogSourceName, directoryWebSource } from '../../../src/web/sources.js';
import { tempDir } from '../../support/temp-dir.js';
import { repo } from '../cli/run-bosun.js';

let web: WebCatalog;
beforeAll(async () => {
  const loaded = await loadServedCatalog(join(repo, 'catalogs/bosun-samples'));
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  web = webCatalog(
    directoryWebSource({
      current: async () => loaded.value,
      name: 'bosun-samples',
      address: () => 'http://127.0.0.1:9/',
      catalogNamespace: 'olm',
    }),
  );
});

const get = (url: string, ifNoneMatch?: string) =>
  web.handle({ method: 'GET', url, ...(ifNoneMatch ? { ifNoneMatch } : {}) });
const json = <T>(body: Buffer | string | undefined) => JSON.parse(String(body)) as T;

describe('wantsHtml', () => {
  it.each([
    ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', true],
    ['TEXT/HTML', true],
    ['text/html;q=0', false],
    ['*/*', false],
    ['application/json', false],
    [undefined, false],
  ])('%j → %s', (accept, expected) => {
    expect(wantsHtml(accept)).toBe(expected);
  });
});

describe('the page', () => {
  it('is served with a Content-Security-Policy that allows no inline script or style, no eval and nothing from elsewhere', async () => {
    const r = (await get('/'))!;
    expect(r.status).toBe(200);
    expect(r.headers['Content-Type']).toBe('text/html; charset=utf-8');
    expect(r.headers['Content-Security-Policy']).toBe(ContentSecurityPolicy);
    const directives = new Map(
      ContentSecurityPolicy.split(';').map((d) => {
        const [name, ...values] = d.trim().split(/\s+/);
        return [name!, values];
      }),
    );
    expect(directives.get('default-src')).toEqual(["'none'"]);
    expect(directives.get('script-src')).toEqual(["'self'"]);
    expect(directives.get('style-src')).toEqual(["'self'"]);
    expect(ContentSecurityPolicy).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    expect(r.headers['X-Content-Type-Options']).toBe('nosniff');
  });

  it('has no inline script, style or handler, and loads only this server`s files', async () => {
    const html = String((await get('/'))!.body);
    for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)) {
      expect(m[1]).toMatch(/\bsrc="assets\//);
      expect(m[2]!.trim()).toBe('');
    }
    expect(html).not.toMatch(/<style|\sstyle=|\son[a-z]+=/i);
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('serves its modules: JavaScript files as they are, TypeScript ones compiled', async () => {
    for (const name of [
      'app.js',
      'search.js',
      'graph.js',
      'snippet.js',
      'session.js',
      'api.js',
      'style.css',
      'favicon.svg',
    ]) {
      const r = await get(`/assets/${name}`);
      expect(r?.status, name).toBe(200);
    }
    const search = (await get('/assets/search.js'))!;
    expect(search.headers['Content-Type']).toBe('text/javascript; charset=utf-8');
    expect(String(search.body)).toContain('export function packageSearch(packages)');
    expect(String(search.body)).not.toMatch(/: PackageSummary|import type/);
    const again = await get('/assets/search.js', search.headers.ETag);
    expect(again?.status).toBe(304);
  });

  it('answers nothing for a file that is not one of its own', async () => {
    for (const path of [
      '/assets/../package.json',
      '/assets/%2e%2e/x.js',
      '/assets/.hidden.js',
      '/assets/tsconfig.json',
      '/assets/nope.js',
    ]) {
      expect(await get(path), path).toBeUndefined();
    }
    expect(await get('/healthz')).toBeUndefined();
  });

  it('writes HTML from a string in one place only: the sanitised description', async () => {
    const app = await readFile(join(repo, 'src/web/client/app.js'), 'utf8');
    const sinks =
      app.match(/\.(innerHTML|outerHTML|insertAdjacentHTML)\b|document\.write|\beval\(|new Function/g) ?? [];
    expect(sinks).toEqual(['.innerHTML']);
    expect(app).toMatch(/\.innerHTML = p\.descriptionHtml;/);
  });
});

describe('the API', () => {
  it('lists the packages with an ETag, and answers 304 while nothing changed', async () => {
    const r = (await get('/api/index'))!;
    expect(r.status).toBe(200);
    const index = json<IndexView>(r.body);
    expect(index.mode).toBe('directory');
    expect(index.catalogs).toEqual([
      { id: 'bosun-samples', name: 'bosun-samples', displayName: 'bosun-samples' },
    ]);
    expect(index.packages.map((p) => p.name)).toEqual(['bosun-sample', 'bosun-sample-dashboard']);
    expect((await get('/api/index', r.headers.ETag))!.status).toBe(304);
  });

  it('gives a package`s page, with the CatalogSource to create for a served directory', async () => {
    const r = (await get('/api/packages/bosun-samples/bosun-sample'))!;
    expect(r.status).toBe(200);
    const d = json<PackageDetail>(r.body);
    expect(d.displayName).toBe('Bosun Sample Operator');
    expect(d.channels.map((c) => c.name)).toEqual(['candidate', 'stable']);
    expect(d.install).toEqual({
      source: { name: 'bosun-samples', namespace: 'olm' },
      catalogSource: { address: 'http://127.0.0.1:9/', displayName: 'bosun-samples' },
      globalOperatorsNamespace: 'operators',
    });
  });

  it('says which package is not there', async () => {
    const r = (await get('/api/packages/bosun-samples/etcd'))!;
    expect(r.status).toBe(404);
    expect(json<{ message: string }>(r.body).message).toBe(
      'package bosun-samples/etcd is not in any catalog served here',
    );
    expect((await get('/api/packages/bosun-samples'))!.status).toBe(404);
    expect((await get('/api/packages/%E0%A4%A/x'))!.status).toBe(404);
  });

  it('serves an icon with its type, and a policy that keeps an SVG from running script when opened alone', async () => {
    const index = json<IndexView>((await get('/api/index'))!.body);
    const r = (await get(`/${index.packages[0]!.icon!}`))!;
    expect(r.status).toBe(200);
    expect(r.headers['Content-Type']).toBe('image/svg+xml');
    expect(r.headers['Content-Security-Policy']).toContain('sandbox');
    expect(String(r.body)).toMatch(/^<svg /);
  });

  it('answers only GET and HEAD', async () => {
    const r = (await web.handle({ method: 'POST', url: '/api/index' }))!;
    expect(r.status).toBe(405);
    expect(r.headers.Allow).toBe('GET, HEAD');
  });
});

describe('bosun catalog serve', () => {
  let server: CatalogServer;
  afterAll(async () => {
    await server?.close();
  });

  it('answers / with the page for a browser and with the catalog for anyone else', async () => {
    const dir = join(await tempDir('bosun-web-'), 'My Catalog');
    await cp(join(repo, 'catalogs/bosun-samples'), dir, { recursive: true });
    const started = await startCatalogServer({
      dir,
      host: '127.0.0.1',
      port: 0,
      catalogNamespace: DefaultGlobalNamespace,
    });
    if (!started.ok) throw new Error(JSON.stringify(started.errors));
    server = started.value;

    const page = await fetch(server.url, { headers: { Accept: 'text/html,*/*;q=0.8' } });
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('vary')).toBe('Accept');
    expect(await page.text()).toContain('<script type="module" src="assets/app.js"></script>');

    const fbc = await fetch(server.url);
    expect(fbc.headers.get('content-type')).toBe('application/json');
    expect(fbc.headers.get('vary')).toBe('Accept');
    expect(await fbc.text()).toBe(server.initial.body.toString());

    const d = (await (
      await fetch(`${server.url}api/packages/my-catalog/bosun-sample`)
    ).json()) as PackageDetail;
    expect(d.install.catalogSource?.address).toBe(server.url);
    expect(d.install.source.name).toBe('my-catalog');
    expect((await fetch(`${server.url}nothing`)).status).toBe(404);
  });

  it.each([
    ['bosun-samples', 'bosun-samples'],
    ['My Catalog', 'my-catalog'],
    ['__', 'catalog'],
    ['a'.repeat(70), 'a'.repeat(63)],
  ])('names the CatalogSource of directory %j %j', (dir, name) => {
    expect(catalogSourceName(dir)).toBe(name);
  });
});
