import { describe, expect, it } from 'vitest';
import type { DeclarativeConfig } from '../../../src/apis/fbc.js';
import { type Change, ChangeKind, diffCatalogs } from '../../../src/catalog/diff.js';
import { bundleDoc, n, packageWith } from './docs.js';

const v = (x: string) => n('kite', x);
const base = (): DeclarativeConfig =>
  packageWith('kite', [
    { name: v('1.0.0') },
    { name: v('1.1.0'), replaces: v('1.0.0') },
    { name: v('1.2.0'), replaces: v('1.1.0') },
  ]);

const summary = (changes: Change[]) =>
  changes.map((c) => [c.kind, c.bundle ?? c.channel ?? c.package, c.breaking]);

describe('diffCatalogs', () => {
  it('finds nothing between equal catalogs', () => {
    expect(diffCatalogs(base(), base())).toEqual([]);
  });

  it('adding a version is not breaking', () => {
    const next = base();
    next.channels[0]!.entries.push({ name: v('1.3.0'), replaces: v('1.2.0') });
    next.bundles.push(bundleDoc('kite', '1.3.0'));
    expect(summary(diffCatalogs(base(), next))).toEqual([
      [ChangeKind.BundleAdded, v('1.3.0'), false],
      [ChangeKind.HeadChanged, 'stable', false],
    ]);
  });

  it('removing the tail strands whoever runs it', () => {
    const next = base();
    next.channels[0]!.entries = next.channels[0]!.entries.slice(1).map((e) =>
      e.name === v('1.1.0') ? { name: e.name } : e,
    );
    next.bundles = next.bundles.filter((b) => b.name !== v('1.0.0'));
    expect(summary(diffCatalogs(base(), next))).toEqual([
      [ChangeKind.EdgesChanged, v('1.1.0'), false],
      [ChangeKind.Stranded, v('1.0.0'), true],
      [ChangeKind.BundleRemoved, v('1.0.0'), true],
    ]);
  });

  it('a removed bundle that something still replaces is not breaking', () => {
    const next = base();
    next.channels[0]!.entries = next.channels[0]!.entries.filter((e) => e.name !== v('1.0.0'));
    next.bundles = next.bundles.filter((b) => b.name !== v('1.0.0'));
    const changes = diffCatalogs(base(), next);
    expect(summary(changes)).toEqual([[ChangeKind.BundleRemoved, v('1.0.0'), false]]);
  });

  it('a skipRange keeps removed versions upgradable', () => {
    const next = base();
    next.channels[0]!.entries = [{ name: v('1.2.0'), skipRange: '>=1.0.0 <1.2.0' }];
    next.bundles = next.bundles.filter((b) => b.name === v('1.2.0'));
    expect(diffCatalogs(base(), next).filter((c) => c.breaking)).toEqual([]);
  });

  it('a version dropped from a channel is stranded there even if the catalog keeps it elsewhere', () => {
    const next = base();
    next.channels[0]!.entries = [{ name: v('1.1.0') }, { name: v('1.2.0'), replaces: v('1.1.0') }];
    next.channels.push({
      schema: 'olm.channel',
      package: 'kite',
      name: 'legacy',
      entries: [{ name: v('1.0.0') }],
    });
    expect(summary(diffCatalogs(base(), next))).toEqual([
      [ChangeKind.ChannelAdded, 'legacy', false],
      [ChangeKind.EdgesChanged, v('1.1.0'), false],
      [ChangeKind.Stranded, v('1.0.0'), true],
    ]);
  });

  it('removed channels and packages are breaking; a new default channel is not', () => {
    const before = base();
    before.packages.push({ schema: 'olm.package', name: 'gone', defaultChannel: 'stable' });
    const next = base();
    next.channels[0]!.name = 'fast';
    next.packages[0]!.defaultChannel = 'fast';
    const changes = diffCatalogs(before, next);
    expect(summary(changes)).toEqual([
      [ChangeKind.PackageRemoved, 'gone', true],
      [ChangeKind.DefaultChannelChanged, 'kite', false],
      [ChangeKind.ChannelAdded, 'fast', false],
      [ChangeKind.ChannelRemoved, 'stable', true],
    ]);
    expect(changes[1]!.message).toBe(
      'default channel of kite changed from stable to fast; existing subscriptions keep their channel',
    );
  });
});
