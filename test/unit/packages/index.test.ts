import { describe, expect, it } from 'vitest';
import { type DeclarativeConfig, emptyConfig } from '../../../src/apis/fbc.js';
import { MemoryCatalogStore } from '../../../src/catalog/content/memory-store.js';
import type { CatalogRef } from '../../../src/catalog/content/store.js';
import { type PackageEvent, PackageIndex } from '../../../src/packages/index.js';
import { inMemoryPayloads } from '../../../src/packages/projection.js';

/** A catalog of packages, each with one channel whose one bundle carries only olm.csv.metadata. */
function config(...pkgs: [name: string, displayName: string][]): DeclarativeConfig {
  const c = emptyConfig();
  for (const [name, displayName] of pkgs) {
    c.packages.push({ schema: 'olm.package', name, defaultChannel: 'stable' });
    c.channels.push({
      schema: 'olm.channel',
      package: name,
      name: 'stable',
      entries: [{ name: `${name}.v1` }],
    });
    c.bundles.push({
      schema: 'olm.bundle',
      package: name,
      name: `${name}.v1`,
      image: '',
      properties: [
        { type: 'olm.package', value: { packageName: name, version: '1.0.0' } },
        { type: 'olm.csv.metadata', value: { displayName } },
      ],
    });
  }
  return c;
}

function setup() {
  const store = new MemoryCatalogStore('olm');
  const index = new PackageIndex({
    catalogs: store,
    catalogSource: () => undefined,
    onCatalogSourceChange: () => () => undefined,
    readPayloads: inMemoryPayloads,
    globalNamespace: 'olm',
  });
  const events: PackageEvent[] = [];
  index.onEvent((e) => events.push(e));
  index.start();
  let n = 0;
  const put = async (ref: CatalogRef, c: DeclarativeConfig) => {
    store.set({ ref, priority: 0, config: c, digest: `d${n++}`, fetchedAt: 0 });
    await index.settled();
  };
  return { store, index, events, put };
}

const names = (e: PackageEvent[]) =>
  e.map((x) => `${x.type} ${x.pkg.manifest.metadata.name}@${x.pkg.resourceVersion}`);

describe('PackageIndex', () => {
  it('numbers each change, sends an event per package changed, and replays what a watch missed', async () => {
    const { index, events, put } = setup();
    const ref = { namespace: 'team', name: 'own' };
    await put(ref, config(['a', 'A'], ['b', 'B']));
    expect(names(events)).toEqual(['ADDED a@2', 'ADDED b@2']);
    const listedAt = index.resourceVersion();

    await put(ref, config(['a', 'A2'], ['b', 'B'], ['c', 'C']));
    await put(ref, config(['a', 'A2'], ['c', 'C']));
    expect(names(events.slice(2))).toEqual(['MODIFIED a@3', 'ADDED c@3', 'DELETED b@4']);
    expect(names(index.eventsSince(listedAt)!)).toEqual(['MODIFIED a@3', 'ADDED c@3', 'DELETED b@4']);
    expect(index.eventsSince(index.resourceVersion())).toEqual([]);

    // The same content again (a new snapshot) changes nothing.
    await put(ref, config(['a', 'A2'], ['c', 'C']));
    expect(events).toHaveLength(5);
  });

  it('shows a namespace its own catalogs and the global ones; every namespace sees a package in its catalog namespace', async () => {
    const { index, put } = setup();
    await put({ namespace: 'olm', name: 'global' }, config(['g', 'G']));
    await put({ namespace: 'team', name: 'own' }, config(['t', 'T'], ['g', 'Own G']));
    const seen = (ns: string) =>
      index.visible(ns).map((p) => `${p.manifest.metadata.name}/${p.catalog.namespace}`);
    expect(seen('team')).toEqual(['g/olm', 'g/team', 't/team']);
    expect(seen('other')).toEqual(['g/olm']);
    expect(seen('')).toEqual(['g/olm', 'g/team', 't/team']);
    // A get prefers the namespace's own catalog.
    expect(index.get('team', 'g')?.catalog.namespace).toBe('team');
    expect(index.get('other', 't')).toBeUndefined();
  });

  it('drops a removed catalog with DELETED events, and says when a watch asks for a version no longer kept', async () => {
    const { store, index, events, put } = setup();
    const ref = { namespace: 'team', name: 'own' };
    await put(ref, config(['a', 'A']));
    store.delete(ref);
    await index.settled();
    expect(names(events)).toEqual(['ADDED a@2', 'DELETED a@3']);
    expect(index.visible('team')).toEqual([]);
    expect(index.eventsSince(-5)).toBeUndefined();
  });
});
