import { describe, expect, it } from 'vitest';
import { emptyConfig } from '../../../src/apis/fbc.js';
import type {
  ClusterServiceVersion,
  HeldVersion,
  InstallPlan,
  Subscription,
  SubscriptionHistoryEntry,
  SubscriptionRollback,
  SubscriptionStatus,
} from '../../../src/apis/operators.js';
import { MemoryCatalogStore } from '../../../src/catalog/content/memory-store.js';
import type { CatalogSnapshot } from '../../../src/catalog/content/store.js';
import {
  desiredInstallPlan,
  generatedSubscriptionName,
  generatedSubscriptions,
  installedFromPlans,
  installedOperators,
  installPlanName,
  resolutionInput,
  type StatusInput,
  subscriptionStatus,
} from '../../../src/controllers/subscription-plan.js';
import { resolve } from '../../../src/resolver/index.js';

const bundle = (pkg: string, version: string, extra: { type: string; value: unknown }[] = []) => ({
  schema: 'olm.bundle' as const,
  name: `${pkg}.v${version}`,
  package: pkg,
  image: `img/${pkg}:${version}`,
  properties: [{ type: 'olm.package', value: { packageName: pkg, version } }, ...extra],
});

function catalog(): CatalogSnapshot {
  const config = emptyConfig();
  config.packages.push(
    { schema: 'olm.package', name: 'foo', defaultChannel: 'stable' },
    { schema: 'olm.package', name: 'bar', defaultChannel: 'stable' },
    { schema: 'olm.package', name: 'app', defaultChannel: 'stable' },
  );
  config.channels.push(
    {
      schema: 'olm.channel',
      package: 'foo',
      name: 'stable',
      entries: [{ name: 'foo.v1.0.0' }, { name: 'foo.v1.1.0', replaces: 'foo.v1.0.0' }],
    },
    { schema: 'olm.channel', package: 'bar', name: 'stable', entries: [{ name: 'bar.v1.0.0' }] },
    { schema: 'olm.channel', package: 'app', name: 'stable', entries: [{ name: 'app.v1.0.0' }] },
  );
  config.bundles.push(
    bundle('foo', '1.0.0'),
    bundle('foo', '1.1.0'),
    bundle('bar', '1.0.0', [
      { type: 'olm.package.required', value: { packageName: 'foo', versionRange: '>=1.0.0' } },
    ]),
    bundle('app', '1.0.0', [
      { type: 'olm.package.required', value: { packageName: 'bar', versionRange: '>=1.0.0' } },
    ]),
  );
  return { ref: { namespace: 'olm', name: 'cat' }, priority: 0, config, digest: 'd', fetchedAt: 0 };
}

const sub = (
  name: string,
  pkg: string,
  extra: Partial<Subscription['spec']> = {},
  status?: Subscription['status'],
): Subscription => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'Subscription',
  metadata: { name, namespace: 'ns', uid: `uid-${name}` },
  spec: { name: pkg, source: 'cat', sourceNamespace: 'olm', ...extra },
  ...(status ? { status } : {}),
});

const csv = (
  name: string,
  version: string,
  extra: Partial<ClusterServiceVersion> = {},
): ClusterServiceVersion => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name, namespace: 'ns', ...extra.metadata },
  spec: { displayName: name, version, install: { strategy: 'deployment' }, ...extra.spec },
  ...(extra.status ? { status: extra.status } : {}),
});

describe('names', () => {
  it('an InstallPlan name depends only on namespace, Subscription and CSV', () => {
    const a = installPlanName('ns', 'foo', 'foo.v1.0.0');
    expect(a).toMatch(/^install-[0-9a-f]{10}$/);
    expect(installPlanName('ns', 'foo', 'foo.v1.0.0')).toBe(a);
    expect(installPlanName('ns', 'foo', 'foo.v1.1.0')).not.toBe(a);
    expect(installPlanName('ns2', 'foo', 'foo.v1.0.0')).not.toBe(a);
  });

  it('generated Subscriptions are named as OLM names them, kept a valid object name', () => {
    expect(generatedSubscriptionName('etcd', 'alpha', 'community', 'olm')).toBe('etcd-alpha-community-olm');
    expect(generatedSubscriptionName('Etcd', 'v1_2', 'Cat', 'olm')).toBe('etcd-v1-2-cat-olm');
    const long = generatedSubscriptionName('p'.repeat(200), 'c'.repeat(60), 's', 'n');
    expect(long.length).toBeLessThanOrEqual(253);
  });
});

/** The catalog store holding `snapshots`: bundles are looked up through its index. */
function storeOf(snapshots: CatalogSnapshot[]): MemoryCatalogStore {
  const store = new MemoryCatalogStore('olm');
  for (const s of snapshots) store.set(s);
  return store;
}

describe('installedOperators', () => {
  it('matches CSVs to catalog bundles, skips copies, and keeps the newer CSV during an upgrade', () => {
    const subs = [sub('foo', 'foo', {}, { currentCSV: 'foo.v1.1.0', lastUpdated: '' })];
    const csvs = [
      csv('foo.v1.0.0', '1.0.0'),
      csv('foo.v1.1.0', '1.1.0', { spec: { replaces: 'foo.v1.0.0' } as never }),
      csv('bar.v1.0.0', '1.0.0', { metadata: { name: 'bar.v1.0.0', labels: { 'olm.copiedFrom': 'other' } } }),
      csv('unknown.v1', '1.0.0'),
    ];
    const installed = installedOperators(subs, csvs, [catalog()], storeOf([catalog()]));
    expect(installed).toEqual([
      expect.objectContaining({
        name: 'foo.v1.1.0',
        package: 'foo',
        version: '1.1.0',
        catalog: { name: 'cat', namespace: 'olm' },
      }),
    ]);
  });

  it('falls back to the operatorframework.io/properties annotation for CSVs no catalog lists', () => {
    const props = JSON.stringify({
      properties: [{ type: 'olm.package', value: { packageName: 'side', version: '2.0.0' } }],
    });
    const installed = installedOperators(
      [],
      [
        csv('side.v2', '2.0.0', {
          metadata: { name: 'side.v2', annotations: { 'operatorframework.io/properties': props } },
        }),
      ],
      [],
      storeOf([]),
    );
    expect(installed).toEqual([
      expect.objectContaining({ name: 'side.v2', package: 'side', version: '2.0.0' }),
    ]);
  });
});

describe('installedOperators reads spec.version as OLM does', () => {
  it.each([
    ['v2.1', '2.1.0'],
    [' 2.01.3 ', '2.1.3'],
    ['2.1.0-rc.1', '2.1.0-rc.1'],
    ['not-a-version', 'not-a-version'],
  ])('%j is %j', (written, read) => {
    const installed = installedOperators(
      [sub('side', 'side', {}, { installedCSV: 'side.v2', lastUpdated: '' })],
      [csv('side.v2', written)],
      [],
      storeOf([]),
    );
    expect(installed).toEqual([expect.objectContaining({ name: 'side.v2', package: 'side', version: read })]);
  });
});

describe('generatedSubscriptions', () => {
  it('covers each dependency no Subscription covers, inheriting approval through a chain', () => {
    const subs = [sub('app', 'app', { installPlanApproval: 'Manual' })];
    const input = resolutionInput('ns', subs, [], [catalog()], storeOf([catalog()]));
    const result = resolve(input, { explain: true });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const generated = generatedSubscriptions(result, subs);
    expect(generated.map((g) => [g.name, g.approval, g.requiredBy])).toEqual([
      ['foo-stable-cat-olm', 'Manual', 'app'],
      ['bar-stable-cat-olm', 'Manual', 'app'],
    ]);
  });

  it('generates nothing for a dependency that already has a Subscription', () => {
    const subs = [sub('bar', 'bar'), sub('foo', 'foo')];
    const result = resolve(resolutionInput('ns', subs, [], [catalog()], storeOf([catalog()])), {
      explain: true,
    });
    expect(result.ok && generatedSubscriptions(result, subs)).toEqual([]);
  });
});

describe('desiredInstallPlan', () => {
  it('is approved at creation only for Automatic Subscriptions, and records the catalog', () => {
    const outcome = {
      subscription: 'foo',
      package: 'foo',
      channel: 'stable',
      catalog: 'cat',
      catalogNamespace: 'olm',
      bundle: 'foo.v1.1.0',
      version: '1.1.0',
      state: 'install' as const,
    };
    const manual = desiredInstallPlan(sub('foo', 'foo', { installPlanApproval: 'Manual' }), outcome, 3);
    expect(manual.spec).toEqual({
      clusterServiceVersionNames: ['foo.v1.1.0'],
      approval: 'Manual',
      approved: false,
      generation: 3,
      source: 'cat',
      sourceNamespace: 'olm',
    });
    expect(desiredInstallPlan(sub('foo', 'foo'), outcome, 1).spec).toMatchObject({
      approval: 'Automatic',
      approved: true,
    });
  });
});

describe('subscriptionStatus', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const outcome = {
    subscription: 'foo',
    package: 'foo',
    channel: 'stable',
    catalog: 'cat',
    catalogNamespace: 'olm',
    bundle: 'foo.v1.1.0',
    version: '1.1.0',
    state: 'install' as const,
  };
  const ip = (
    phase: string,
    approval: 'Manual' | 'Automatic' = 'Automatic',
    approved = true,
  ): InstallPlan => ({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'InstallPlan',
    metadata: { name: 'install-1', namespace: 'ns', uid: 'ip-uid' },
    spec: { clusterServiceVersionNames: ['foo.v1.1.0'], approval, approved },
    ...(phase ? { status: { phase: phase as never, catalogSources: [] } } : {}),
  });
  const base = (over: Partial<StatusInput>): StatusInput => ({
    sub: sub('foo', 'foo'),
    now,
    resolution: { ok: true, outcome },
    catalogHealth: [],
    catalog: { healthy: true },
    csvs: new Map(),
    ...over,
  });
  const types = (s: { conditions?: { type: string; status: string; reason?: string }[] }) =>
    (s.conditions ?? []).map((c) => `${c.type}=${c.status}/${c.reason}`);

  it('a fresh plan is UpgradePending with InstallPlanPending', () => {
    const s = subscriptionStatus(base({ installPlan: ip('') }));
    expect(s).toMatchObject({
      state: 'UpgradePending',
      currentCSV: 'foo.v1.1.0',
      installPlanRef: { name: 'install-1', uid: 'ip-uid' },
    });
    expect(types(s)).toEqual([
      'CatalogSourcesUnhealthy=False/AllCatalogSourcesHealthy',
      'InstallPlanPending=True/InstallPlanNotYetReconciled',
    ]);
  });

  it('a Manual plan not yet approved says RequiresApproval', () => {
    const s = subscriptionStatus(base({ installPlan: ip('', 'Manual', false) }));
    expect(types(s)).toContain('InstallPlanPending=True/RequiresApproval');
  });

  it('a Succeeded CSV makes it AtLatestKnown with installedCSV and no pending condition', () => {
    const csvs = new Map([['foo.v1.1.0', csv('foo.v1.1.0', '1.1.0', { status: { phase: 'Succeeded' } })]]);
    const pending = subscriptionStatus(base({ installPlan: ip('Installing') }));
    const s = subscriptionStatus(
      base({ sub: sub('foo', 'foo', {}, pending), installPlan: ip('Complete'), csvs }),
    );
    expect(s).toMatchObject({ state: 'AtLatestKnown', installedCSV: 'foo.v1.1.0' });
    expect(types(s)).toEqual(['CatalogSourcesUnhealthy=False/AllCatalogSourcesHealthy']);
  });

  it('a target CSV held by the operator’s Upgradeable=False says so, and the condition goes when it moves on', () => {
    const held = csv('foo.v1.1.0', '1.1.0', {
      status: {
        phase: 'Pending',
        reason: 'OperatorConditionNotUpgradeable',
        message: 'the operator is not upgradeable: migrating',
      },
    } as Partial<ClusterServiceVersion>);
    const s = subscriptionStatus(
      base({ installPlan: ip('Complete'), csvs: new Map([['foo.v1.1.0', held]]) }),
    );
    expect(s.conditions?.find((c) => c.type === 'UpgradeHeld')).toMatchObject({
      status: 'True',
      reason: 'OperatorConditionNotUpgradeable',
      message: 'foo.v1.1.0 waits: the operator is not upgradeable: migrating',
    });
    const moved = csv('foo.v1.1.0', '1.1.0', { status: { phase: 'Succeeded' } });
    const after = subscriptionStatus(
      base({
        sub: sub('foo', 'foo', {}, s),
        installPlan: ip('Complete'),
        csvs: new Map([['foo.v1.1.0', moved]]),
      }),
    );
    expect(types(s).some((t) => t.startsWith('UpgradeHeld=True'))).toBe(true);
    expect(types(after).some((t) => t.startsWith('UpgradeHeld'))).toBe(false);
  });

  it('a failed plan is UpgradeFailed with InstallPlanFailed', () => {
    const failed = ip('Failed');
    failed.status!.conditions = [
      { type: 'Installed', status: 'False', reason: 'InstallComponentFailed', message: 'boom' },
    ];
    const s = subscriptionStatus(base({ installPlan: failed }));
    expect(s.state).toBe('UpgradeFailed');
    expect(s.conditions?.find((c) => c.type === 'InstallPlanFailed')).toMatchObject({
      status: 'True',
      reason: 'InstallComponentFailed',
      message: 'boom',
    });
  });

  it('a resolution failure is shown, and a later success removes it', () => {
    const failed = subscriptionStatus(
      base({
        resolution: { ok: false, reason: 'ConstraintsNotSatisfiable', message: 'Cannot resolve: ...' },
      }),
    );
    expect(types(failed)).toContain('ResolutionFailed=True/ConstraintsNotSatisfiable');
    const ok = subscriptionStatus(base({ sub: sub('foo', 'foo', {}, failed) }));
    expect(types(ok).some((t) => t.startsWith('ResolutionFailed'))).toBe(false);
  });

  it('an unhealthy catalog is True with its message, and recovery flips it back to False', () => {
    const sick = subscriptionStatus(
      base({ catalog: { healthy: false, message: 'CatalogSource olm/cat is unhealthy: HTTP 500' } }),
    );
    expect(sick.conditions?.[0]).toMatchObject({
      type: 'CatalogSourcesUnhealthy',
      status: 'True',
      reason: 'UnhealthyCatalogSourceFound',
      message: 'CatalogSource olm/cat is unhealthy: HTTP 500',
    });
    const well = subscriptionStatus(base({ sub: sub('foo', 'foo', {}, sick) }));
    expect(well.conditions?.[0]).toMatchObject({ status: 'False', reason: 'AllCatalogSourcesHealthy' });
  });
});

describe('subscriptionStatus: history and rollback', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  const at = '2026-01-01T00:00:00Z';
  const outcome = {
    subscription: 'foo',
    package: 'foo',
    channel: 'stable',
    catalog: 'cat',
    catalogNamespace: 'olm',
    bundle: 'foo.v1.1.0',
    version: '1.1.0',
    state: 'install' as const,
  };
  const base = (over: Partial<StatusInput>): StatusInput => ({
    sub: sub('foo', 'foo'),
    now,
    resolution: { ok: true, outcome },
    catalogHealth: [],
    catalog: { healthy: true },
    csvs: new Map(),
    ...over,
  });
  const inPhase = (name: string, version: string, phase: string) =>
    csv(name, version, { status: { phase } } as Partial<ClusterServiceVersion>);
  const csvMap = (...list: ClusterServiceVersion[]) => new Map(list.map((c) => [c.metadata.name!, c]));
  const installed = (name: string, version: string, time = at): SubscriptionHistoryEntry => ({
    csv: name,
    version,
    time,
    outcome: 'Installed',
  });
  const rollback = (phase: SubscriptionRollback['phase'], message?: string): SubscriptionRollback => ({
    phase,
    from: 'foo.v1.1.0',
    to: 'foo.v1.0.0',
    cause: 'foo.v1.1.0 did not reach Succeeded within 5m0s (it is Installing)',
    startedAt: at,
    ...(message ? { message } : {}),
  });
  const rolledBackCondition = (s: SubscriptionStatus) =>
    s.conditions
      ?.filter((c) => c.type === 'RolledBack')
      .map(({ status, reason, message }) => ({ status, reason, message }));

  it('a Succeeded target gets an Installed entry, with its version and the time', () => {
    const s = subscriptionStatus(base({ csvs: csvMap(inPhase('foo.v1.1.0', '1.1.0', 'Succeeded')) }));
    expect(s.history).toEqual([{ csv: 'foo.v1.1.0', version: '1.1.0', time: at, outcome: 'Installed' }]);
  });

  it('a target that is not Succeeded gets no entry, and an empty history is left out', () => {
    const s = subscriptionStatus(base({ csvs: csvMap(inPhase('foo.v1.1.0', '1.1.0', 'Installing')) }));
    expect(s).not.toHaveProperty('history');
    const cleared = subscriptionStatus(
      base({
        sub: sub('foo', 'foo', {}, { lastUpdated: at, history: [installed('foo.v1.0.0', '1.0.0')] }),
        rollback: { rollback: undefined, history: [], held: [] },
      }),
    );
    expect(cleared).not.toHaveProperty('history');
  });

  it('the target already newest is not added again', () => {
    const earlier = installed('foo.v1.1.0', '1.1.0', '2025-12-31T00:00:00Z');
    const s = subscriptionStatus(
      base({
        sub: sub('foo', 'foo', {}, { lastUpdated: at, currentCSV: 'foo.v1.1.0', history: [earlier] }),
        csvs: csvMap(inPhase('foo.v1.1.0', '1.1.0', 'Succeeded')),
      }),
    );
    expect(s.history).toEqual([earlier]);
  });

  it('the previous currentCSV, Succeeded as the next upgrade was found, goes in before the target', () => {
    const s = subscriptionStatus(
      base({
        sub: sub('foo', 'foo', {}, { lastUpdated: at, currentCSV: 'foo.v1.0.0' }),
        csvs: csvMap(inPhase('foo.v1.0.0', '1.0.0', 'Succeeded'), inPhase('foo.v1.1.0', '1.1.0', 'Pending')),
      }),
    );
    expect(s.currentCSV).toBe('foo.v1.1.0');
    expect(s.history).toEqual([installed('foo.v1.0.0', '1.0.0')]);
    const both = subscriptionStatus(
      base({
        sub: sub('foo', 'foo', {}, { lastUpdated: at, currentCSV: 'foo.v1.0.0' }),
        csvs: csvMap(
          inPhase('foo.v1.0.0', '1.0.0', 'Succeeded'),
          inPhase('foo.v1.1.0', '1.1.0', 'Succeeded'),
        ),
      }),
    );
    expect(both.history).toEqual([installed('foo.v1.1.0', '1.1.0'), installed('foo.v1.0.0', '1.0.0')]);
  });

  it('starts from the history the upgrade guard passes, not the stored one', () => {
    const failedEntry: SubscriptionHistoryEntry = {
      csv: 'foo.v1.1.0',
      version: '1.1.0',
      time: at,
      outcome: 'Failed',
      message: 'deadline',
    };
    const s = subscriptionStatus(
      base({
        sub: sub('foo', 'foo', {}, { lastUpdated: at, history: [installed('stale.v0', '0')] }),
        csvs: csvMap(inPhase('foo.v1.1.0', '1.1.0', 'Succeeded')),
        rollback: { rollback: undefined, history: [failedEntry], held: [] },
      }),
    );
    // foo.v1.1.0 is the newest entry already (its csv, whatever the outcome): nothing is added.
    expect(s.history).toEqual([failedEntry]);
  });

  it('status.rollback is copied from the guard, and removed when it has none', () => {
    const r = rollback('RollingBack');
    const s = subscriptionStatus(base({ rollback: { rollback: r, history: [], held: [] } }));
    expect(s.rollback).toEqual(r);
    const after = subscriptionStatus(
      base({ sub: sub('foo', 'foo', {}, s), rollback: { rollback: undefined, history: [], held: [] } }),
    );
    expect(after).not.toHaveProperty('rollback');
    expect(after.conditions?.some((c) => c.type === 'RolledBack')).toBe(false);
  });

  it('without the guard’s word, the stored rollback and history are kept', () => {
    const r = rollback('RolledBack');
    const history = [installed('foo.v1.0.0', '1.0.0')];
    const s = subscriptionStatus(
      base({ sub: sub('foo', 'foo', {}, { lastUpdated: at, rollback: r, history }) }),
    );
    expect(s.rollback).toEqual(r);
    expect(s.history).toEqual(history);
  });

  it('RollingBack: RolledBack=True/RollingBack naming from, to and cause', () => {
    const s = subscriptionStatus(
      base({ rollback: { rollback: rollback('RollingBack'), history: [], held: [] } }),
    );
    expect(rolledBackCondition(s)).toEqual([
      {
        status: 'True',
        reason: 'RollingBack',
        message:
          'rolling back from foo.v1.1.0 to foo.v1.0.0: foo.v1.1.0 did not reach Succeeded within 5m0s (it is Installing)',
      },
    ]);
    expect(s.state).toBe('UpgradePending');
  });

  it('RolledBack: RolledBack=True/RolledBack, and the state is UpgradeFailed', () => {
    const s = subscriptionStatus(
      base({
        resolution: { ok: true, outcome: { ...outcome, bundle: 'foo.v1.0.0', version: '1.0.0' } },
        csvs: csvMap(inPhase('foo.v1.0.0', '1.0.0', 'Succeeded')),
        rollback: { rollback: rollback('RolledBack'), history: [], held: [] },
      }),
    );
    expect(rolledBackCondition(s)).toEqual([
      {
        status: 'True',
        reason: 'RolledBack',
        message:
          'rolled back from foo.v1.1.0 to foo.v1.0.0: foo.v1.1.0 did not reach Succeeded within 5m0s (it is Installing). ' +
          'foo.v1.1.0 is not tried again until the catalog changes it, or `bosun upgrade retry` asks for it',
      },
    ]);
    // The reinstated version is Succeeded, but the upgrade failed.
    expect(s).toMatchObject({ state: 'UpgradeFailed', installedCSV: 'foo.v1.0.0' });
  });

  it('Refused: RolledBack=False/RollbackRefused with the cause and why not; the state is not UpgradeFailed', () => {
    const s = subscriptionStatus(
      base({
        csvs: csvMap(inPhase('foo.v1.1.0', '1.1.0', 'Installing')),
        rollback: {
          rollback: rollback('Refused', 'nothing was changed: CRD widgets'),
          history: [],
          held: [],
        },
      }),
    );
    expect(rolledBackCondition(s)).toEqual([
      {
        status: 'False',
        reason: 'RollbackRefused',
        message:
          'foo.v1.1.0 did not reach Succeeded within 5m0s (it is Installing); not rolled back: nothing was changed: CRD widgets',
      },
    ]);
    expect(s.state).toBe('UpgradePending');
  });

  it('the condition follows the rollback through its phases, with one entry of its type', () => {
    const rolling = subscriptionStatus(
      base({ rollback: { rollback: rollback('RollingBack'), history: [], held: [] } }),
    );
    const done = subscriptionStatus(
      base({
        sub: sub('foo', 'foo', {}, rolling),
        now: now + 60_000,
        rollback: { rollback: rollback('RolledBack'), history: [], held: [] },
      }),
    );
    const conds = done.conditions?.filter((c) => c.type === 'RolledBack') ?? [];
    expect(conds).toHaveLength(1);
    expect(conds[0]).toMatchObject({ status: 'True', reason: 'RolledBack', lastTransitionTime: at });
    const refused = subscriptionStatus(
      base({
        sub: sub('foo', 'foo', {}, done),
        now: now + 120_000,
        rollback: { rollback: rollback('Refused', 'why'), history: [], held: [] },
      }),
    );
    expect(refused.conditions?.filter((c) => c.type === 'RolledBack')).toEqual([
      expect.objectContaining({
        status: 'False',
        reason: 'RollbackRefused',
        lastTransitionTime: '2026-01-01T00:02:00Z',
      }),
    ]);
  });

  it('status.heldBack is copied from the guard’s held versions, and removed when there are none', () => {
    const held: HeldVersion[] = [{ csv: 'foo.v1.1.0', bundleDigest: 'd1', since: at }];
    const s = subscriptionStatus(base({ rollback: { rollback: rollback('RolledBack'), history: [], held } }));
    expect(s.heldBack).toEqual(held);
    expect(s.heldBack).not.toBe(held);
    const lifted = subscriptionStatus(
      base({ sub: sub('foo', 'foo', {}, s), rollback: { rollback: undefined, history: [], held: [] } }),
    );
    expect(lifted).not.toHaveProperty('heldBack');
  });

  it('without the guard’s word, the stored held versions are kept', () => {
    const heldBack: HeldVersion[] = [{ csv: 'foo.v1.1.0', since: at }];
    const s = subscriptionStatus(base({ sub: sub('foo', 'foo', {}, { lastUpdated: at, heldBack }) }));
    expect(s.heldBack).toEqual(heldBack);
  });
});

describe('installedFromPlans', () => {
  const plan = (...names: string[]) =>
    ({ spec: { clusterServiceVersionNames: names, approval: 'Manual', approved: true } }) as never;
  const succeeded = { status: { phase: 'Succeeded' } } as Partial<ClusterServiceVersion>;

  it('names the newest Succeeded CSV of the completed plans: an upgrade waiting for approval keeps the old one installed', () => {
    const csvs = new Map([
      ['op.v1', csv('op.v1', '1.0.0', succeeded)],
      ['op.v2', csv('op.v2', '2.0.0', { ...succeeded, spec: { replaces: 'op.v1' } as never })],
    ]);
    expect(installedFromPlans([plan('op.v1')], csvs)).toBe('op.v1');
    expect(installedFromPlans([plan('op.v1'), plan('op.v2')], csvs)).toBe('op.v2');
  });

  it('names none while no CSV of a completed plan has Succeeded', () => {
    const csvs = new Map([['op.v1', csv('op.v1', '1.0.0', { status: { phase: 'Installing' } } as never)]]);
    expect(installedFromPlans([plan('op.v1')], csvs)).toBeUndefined();
    expect(installedFromPlans([], csvs)).toBeUndefined();
  });
});
