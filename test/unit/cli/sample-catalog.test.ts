import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compareVersions } from '../../../src/olm/version.js';
import { snapshot } from '../catalog/snapshot.js';
import { bosun, json, repo, workdir } from './run-bosun.js';

/** Every sample bundle, package by package in name order, version by version in semver order. */
async function sampleBundles(): Promise<string[]> {
  const out: string[] = [];
  const entries = await readdir(join(repo, 'bundles'), { withFileTypes: true });
  const packages = entries.filter((e) => e.isDirectory()).map((e) => e.name);
  for (const pkg of packages.sort()) {
    const versions = (await readdir(join(repo, 'bundles', pkg))).sort(compareVersions);
    for (const v of versions) out.push(`bundles/${pkg}/${v}`);
  }
  return out;
}

describe('the example catalog', () => {
  it('is what publishing the sample bundles produces, byte for byte', async () => {
    const dir = await workdir('bundles');
    const bundles = await sampleBundles();
    expect(bundles).toHaveLength(6);
    for (const b of bundles) {
      const r = await bosun(dir, 'catalog', 'publish', 'catalogs/bosun-samples', b);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(await snapshot(join(dir, 'catalogs/bosun-samples'))).toEqual(
      await snapshot(join(repo, 'catalogs/bosun-samples')),
    );
  });

  it('validates, with the upgrade graph the README describes', async () => {
    const r = await bosun(repo, 'catalog', 'validate', 'catalogs/bosun-samples', '--output', 'json');
    expect(json(r)).toEqual({ ok: true, packages: 2, bundles: 6, errors: [], warnings: [] });
    const rendered = await bosun(repo, 'catalog', 'render', 'catalogs/bosun-samples', '-o', 'json');
    const docs = rendered.stdout.split(/\n(?=\{)/).map((d) => JSON.parse(d));
    const stable = docs.find(
      (d) => d.schema === 'olm.channel' && d.package === 'bosun-sample' && d.name === 'stable',
    );
    expect(stable.entries).toEqual([
      { name: 'bosun-sample.v0.1.0' },
      { name: 'bosun-sample.v0.1.1', replaces: 'bosun-sample.v0.1.0' },
      { name: 'bosun-sample.v0.2.0', replaces: 'bosun-sample.v0.1.1' },
      { name: 'bosun-sample.v0.2.1', replaces: 'bosun-sample.v0.1.1', skips: ['bosun-sample.v0.2.0'] },
    ]);
    const dashboard = docs.find(
      (d) => d.schema === 'olm.bundle' && d.name === 'bosun-sample-dashboard.v0.2.0',
    );
    expect(dashboard.properties).toEqual(
      expect.arrayContaining([
        {
          type: 'olm.gvk.required',
          value: { group: 'sample.bosun.dev', kind: 'Widget', version: 'v1alpha1' },
        },
        {
          type: 'olm.package.required',
          value: { packageName: 'bosun-sample', versionRange: '>=0.2.0 <1.0.0' },
        },
      ]),
    );
  });
});
