/**
 * `bosun catalog serve` as its own process (the CLI as users run it): the URL it prints on a
 * free port, 200 with a strong ETag then 304, a `bosun catalog publish` into the directory
 * served without a restart, a broken change logged while the last valid catalog is served on,
 * a CatalogSource of sourceType http READY on it, and a clean stop on SIGTERM.
 */
import type { ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogSource } from '../../../src/apis/operators.js';
import { catalogSourceController } from '../../../src/controllers/catalogsource.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { spawnBosun } from '../../support/bosun-process.js';
import { tempDir } from '../../support/temp-dir.js';
import { repo, runBosun } from '../../unit/cli/run-bosun.js';
import { catalogSource, create, get, Resources, startTestManager } from '../controllers/support.js';
import { eventually, freshNamespace } from '../support.js';

/** The CLI in a process of its own, its output collected. */
function bosunProcess(args: string[]): {
  child: ChildProcess;
  out: () => string;
  err: () => string;
} {
  const child = spawnBosun(args, { cwd: repo });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return { child, out: () => out, err: () => err };
}

const publish = async (dir: string, bundle: string) => {
  const r = await runBosun(['catalog', 'publish', dir, join(repo, 'bundles/bosun-sample', bundle)]);
  expect(r.code, r.stderr).toBe(0);
};

/** The bundles of a JSON stream as `catalog render -o json` writes it: each document starts a line with `{`. */
const bundleNames = (body: string) =>
  body
    .split(/\n(?=\{)/)
    .map((d) => JSON.parse(d) as { schema?: string; name?: string })
    .filter((d) => d.schema === 'olm.bundle')
    .map((d) => d.name);

let manager: RunningManager;
beforeAll(async () => {
  manager = await startTestManager([catalogSourceController]);
});
afterAll(async () => {
  await manager?.stop();
});

describe('bosun catalog serve', () => {
  it('serves a catalog directory with ETags, follows publishes, and an http CatalogSource reads it', async () => {
    const dir = await tempDir('bosun-serve-');
    await publish(dir, '0.1.0');
    const serve = bosunProcess(['catalog', 'serve', dir, '--addr', '127.0.0.1:0']);
    try {
      const url = await eventually('the URL on the first line', async () =>
        serve.out().includes('\n') ? serve.out().split('\n')[0] : undefined,
      );
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:(\d+)\/$/);
      expect(url).not.toBe('http://127.0.0.1:0/');

      const first = await fetch(url);
      expect(first.status).toBe(200);
      const etag = first.headers.get('etag');
      expect(etag).toMatch(/^"sha256:[0-9a-f]{64}"$/);
      const rendered = await runBosun(['catalog', 'render', dir, '-o', 'json']);
      expect(await first.text()).toBe(rendered.stdout);

      const unchanged = await fetch(url, { headers: { 'If-None-Match': etag! } });
      expect(unchanged.status).toBe(304);
      expect(unchanged.headers.get('etag')).toBe(etag);
      expect(await unchanged.text()).toBe('');

      // A CatalogSource of sourceType http at the printed URL.
      const ns = await freshNamespace('serve');
      await create(
        Resources.CatalogSource,
        ns,
        catalogSource(ns, 'served', {
          sourceType: 'http',
          address: url,
          updateStrategy: { registryPoll: { interval: '1s' } },
        }),
      );
      await eventually('the http CatalogSource to be READY', async () => {
        const cs = await get<CatalogSource>(Resources.CatalogSource, ns, 'served');
        return cs?.status?.connectionState?.lastObservedState === 'READY' ? cs : undefined;
      });
      const ref = { namespace: ns, name: 'served' };
      expect(manager.ctx.catalogs.get(ref)?.config.bundles.map((b) => b.name)).toEqual([
        'bosun-sample.v0.1.0',
      ]);

      // A publish into the directory is served at once, with a new ETag, and reaches the store.
      await publish(dir, '0.1.1');
      const changed = await fetch(url, { headers: { 'If-None-Match': etag! } });
      expect(changed.status).toBe(200);
      const etag2 = changed.headers.get('etag');
      expect(etag2).not.toBe(etag);
      const body2 = await changed.text();
      expect(bundleNames(body2)).toEqual(['bosun-sample.v0.1.0', 'bosun-sample.v0.1.1']);
      await eventually('the store to hold 0.1.1', async () =>
        manager.ctx.catalogs.get(ref)?.config.bundles.some((b) => b.name === 'bosun-sample.v0.1.1')
          ? true
          : undefined,
      );

      // A change that breaks the catalog is logged; the last valid catalog is served on.
      await writeFile(
        join(dir, 'broken.yaml'),
        'schema: olm.channel\nname: x\npackage: nowhere\nentries: []\n',
      );
      const broken = await fetch(url);
      expect(broken.status).toBe(200);
      expect(broken.headers.get('etag')).toBe(etag2);
      expect(await broken.text()).toBe(body2);
      expect(serve.err()).toContain('is no longer a valid catalog; still serving the last valid one');
    } finally {
      const exited = new Promise<number | null>((r) => serve.child.once('exit', (code) => r(code)));
      serve.child.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });
});
