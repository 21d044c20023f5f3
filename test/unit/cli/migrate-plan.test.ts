/**
 * The plan of `bosun migrate subscription` from plain objects: the ClusterExtension it makes
 * (name, namespace, ServiceAccount, channel, a version only for a Manual Subscription, a selector
 * only when several catalogs serve the package, the adoption annotation), and each refusal, with
 * several shapes of each kind of input v1 cannot take.
 */
import { describe, expect, it } from 'vitest';
import type { ClusterExtension } from '../../../src/apis/olmv1.js';
import type {
  ClusterServiceVersion,
  InstallPlan,
  OperatorGroup,
  Subscription,
} from '../../../src/apis/operators.js';
import {
  type CatalogOffer,
  CatalogNameLabel,
  describeExtension,
  type MigrationInput,
  parseTimeout,
  planMigration,
  renderPlan,
} from '../../../src/cli/migrate-plan.js';
import { formatProblem } from '../../../src/util/result.js';

const ns = 'operators';

function sub(over: Partial<Subscription['spec']> = {}, name = 'widgets'): Subscription {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name, namespace: ns, uid: 'sub-uid' },
    spec: { source: 'cs', sourceNamespace: ns, name: 'widget-operator', channel: 'stable', ...over },
    status: { installedCSV: 'widget-operator.v1.2.3', lastUpdated: '' },
  } as Subscription;
}

function csv(over: Partial<ClusterServiceVersion['spec']> = {}, phase = 'Succeeded'): ClusterServiceVersion {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: 'widget-operator.v1.2.3', namespace: ns, uid: 'csv-uid' },
    spec: { version: '1.2.3', ...over },
    status: { phase },
  } as ClusterServiceVersion;
}

const group = (spec: OperatorGroup['spec'] = {}, name = 'global'): OperatorGroup =>
  ({
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name, namespace: ns },
    spec,
  }) as OperatorGroup;

function offer(over: Partial<CatalogOffer> = {}): CatalogOffer {
  return {
    name: 'community',
    labels: {},
    priority: 0,
    serving: true,
    bundles: [{ name: 'widget-operator.v1.2.3', properties: [{ type: 'olm.package', value: {} }] }],
    channels: [{ name: 'stable', entries: [{ name: 'widget-operator.v1.2.3' }] }],
    ...over,
  };
}

function input(over: Partial<MigrationInput> = {}): MigrationInput {
  const s = over.subscription ?? sub();
  return {
    subscription: s,
    operatorGroups: [group({ serviceAccountName: 'installer' })],
    installPlans: [],
    csv: csv(),
    subscriptions: [s],
    extensions: [],
    csvs: [],
    catalogs: [offer()],
    ...over,
  };
}

/** The refusal's lines, as the command prints them. */
function refused(i: MigrationInput): string[] {
  const r = planMigration(i);
  if (r.ok) throw new Error(`expected a refusal, got the plan:\n${renderPlan(r.value)}`);
  return r.errors.map(formatProblem);
}

const ext = (name: string, pkg: string): ClusterExtension => ({
  apiVersion: 'olm.operatorframework.io/v1',
  kind: 'ClusterExtension',
  metadata: { name },
  spec: {
    namespace: 'elsewhere',
    serviceAccount: { name: 'sa' },
    source: { sourceType: 'Catalog', catalog: { packageName: pkg } },
  },
});

describe('the migration plan', () => {
  it('makes the extension of an Automatic Subscription: its name, namespace, channel, no version, no selector, the adoption annotation', () => {
    const r = planMigration(input());
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.extension).toEqual({
      apiVersion: 'olm.operatorframework.io/v1',
      kind: 'ClusterExtension',
      metadata: { name: 'widgets', annotations: { 'bosun.dev/migrated-from-subscription': 'widgets' } },
      spec: {
        namespace: ns,
        serviceAccount: { name: 'installer' },
        source: { sourceType: 'Catalog', catalog: { packageName: 'widget-operator', channels: ['stable'] } },
      },
    });
    expect(r.value).toMatchObject({
      csv: 'widget-operator.v1.2.3',
      csvUid: 'csv-uid',
      operatorGroup: 'global',
    });
    expect(renderPlan(r.value)).toContain('keeps upgrading along channel stable');
    expect(renderPlan(r.value)).toContain('OperatorGroup operators/global stays');
  });

  it('pins a Manual Subscription to its installed version, and says so', () => {
    const r = planMigration(input({ subscription: sub({ installPlanApproval: 'Manual' }) }));
    if (!r.ok) throw new Error(r.errors.map(formatProblem).join('\n'));
    expect(r.value.extension.spec?.source.catalog?.version).toBe('1.2.3');
    expect(renderPlan(r.value)).toContain('pinned to version 1.2.3');
  });

  it('leaves channels out for a Subscription without a channel', () => {
    const r = planMigration(input({ subscription: sub({ channel: undefined }) }));
    if (!r.ok) throw new Error(r.errors.map(formatProblem).join('\n'));
    expect(r.value.extension.spec?.source.catalog?.channels).toBeUndefined();
  });

  it('takes --service-account over the group’s, and refuses when neither names one', () => {
    const given = planMigration(input({ serviceAccount: 'mine' }));
    expect(given.ok && given.value.extension.spec?.serviceAccount.name).toBe('mine');
    expect(refused(input({ operatorGroups: [group({})] }))).toEqual([
      'OperatorGroup operators/global: spec.serviceAccountName: is not set, and a ClusterExtension requires spec.serviceAccount: give one with --service-account',
    ]);
  });

  it('selects the catalog that offers the bundle by its name label when several serve the package', () => {
    const other = offer({
      name: 'other',
      labels: { tier: 'x' },
      bundles: [{ name: 'widget-operator.v2.0.0', properties: [] }],
    });
    // Labelled with its name or not (catalogd's webhook labels it; Bosun counts it as labelled either way).
    for (const labels of [{ [CatalogNameLabel]: 'community', tier: 'x' }, {}, { tier: 'x' }] as Record<
      string,
      string
    >[])
      for (const catalogs of [
        [offer({ labels }), other],
        [other, offer({ labels })],
      ]) {
        const r = planMigration(input({ catalogs }));
        expect(r.ok && r.value.extension.spec?.source.catalog?.selector).toEqual({
          matchLabels: { [CatalogNameLabel]: 'community' },
        });
        expect(r.ok && renderPlan(r.value)).toContain(
          `catalog selector ${CatalogNameLabel}=community: ClusterCatalog community serves widget-operator.v1.2.3, and other ClusterCatalogs serve package widget-operator too`,
        );
      }
    // A catalog not serving does not count, and is not read.
    const alone = planMigration(input({ catalogs: [offer(), { ...other, serving: false }] }));
    expect(alone.ok && alone.value.extension.spec?.source.catalog?.selector).toBeUndefined();
  });

  it('of several catalogs offering the bundle, picks the highest priority, and refuses a tie', () => {
    const high = offer({ name: 'high', priority: 5, labels: { [CatalogNameLabel]: 'high' } });
    const r = planMigration(input({ catalogs: [offer(), high] }));
    expect(r.ok && r.value.catalog).toBe('high');
    expect(refused(input({ catalogs: [offer(), offer({ name: 'twin' })] }))).toEqual([
      'bundle widget-operator.v1.2.3: is offered at the same priority by ClusterCatalogs community, twin: give one a higher spec.priority',
    ]);
  });
});

describe('a migration is refused, naming the object, field and reason', () => {
  it.each<[string, Partial<MigrationInput>, string]>([
    [
      'no installed CSV',
      { subscription: { ...sub(), status: { lastUpdated: '' } } },
      'Subscription operators/widgets: status.installedCSV: is not set',
    ],
    [
      'the installed CSV is gone',
      { csv: undefined },
      'names ClusterServiceVersion operators/widget-operator.v1.2.3, which does not exist',
    ],
    [
      'the CSV is Failed',
      { csv: csv({}, 'Failed') },
      'ClusterServiceVersion operators/widget-operator.v1.2.3: status.phase: is "Failed", not Succeeded',
    ],
    ['the CSV is Installing', { csv: csv({}, 'Installing') }, 'is "Installing", not Succeeded'],
    ['the CSV is Replacing', { csv: csv({}, 'Replacing') }, 'is "Replacing", not Succeeded'],
    ['no OperatorGroup', { operatorGroups: [] }, 'namespace operators: has no OperatorGroup'],
    [
      'two OperatorGroups',
      { operatorGroups: [group({}, 'a'), group({}, 'b')] },
      'namespace operators: has 2 OperatorGroups (a, b)',
    ],
    [
      'a group with targetNamespaces',
      { operatorGroups: [group({ targetNamespaces: ['operators'] })] },
      'OperatorGroup operators/global: spec.targetNamespaces: targets operators; a ClusterExtension (v1.2.0) installs for all namespaces only',
    ],
    [
      'a group with several targets',
      { operatorGroups: [group({ targetNamespaces: ['a', 'b'] })] },
      'targets a, b;',
    ],
    [
      'a group with a label selector',
      {
        operatorGroups: [
          {
            ...group({ selector: { matchLabels: { team: 'x' } } }),
            status: { namespaces: ['t1', 't2'], lastUpdated: '' },
          },
        ],
      },
      'OperatorGroup operators/global: spec.selector: targets the namespaces team=x selects (now t1, t2)',
    ],
    [
      'a group with a selector expression',
      { operatorGroups: [group({ selector: { matchExpressions: [{ key: 'team', operator: 'Exists' }] } })] },
      'spec.selector: targets the namespaces team Exists selects',
    ],
    [
      'another Subscription to the package',
      { subscriptions: [sub(), { ...sub({}, 'twin'), metadata: { name: 'twin', namespace: 'other' } }] },
      'package "widget-operator" is also managed by Subscription other/twin',
    ],
    [
      'a ClusterExtension of the package',
      { extensions: [ext('owner', 'widget-operator')] },
      'package "widget-operator" is already managed by ClusterExtension owner',
    ],
    [
      'a ClusterExtension of the name',
      { extensions: [ext('widgets', 'something-else')] },
      'ClusterExtension widgets: already exists',
    ],
    [
      'no catalog offers the bundle',
      { catalogs: [offer({ bundles: [{ name: 'widget-operator.v9.0.0', properties: [] }] })] },
      'bundle widget-operator.v1.2.3: no serving ClusterCatalog offers it (package widget-operator is served by community)',
    ],
    [
      'only a catalog not serving offers it',
      { catalogs: [offer({ serving: false })] },
      'no serving ClusterCatalog offers it',
    ],
    ['no catalog at all', { catalogs: [] }, 'no serving ClusterCatalog offers it'],
    [
      'a catalog that cannot be read',
      { catalogs: [offer({ error: 'GET http://x/: HTTP 500' })] },
      'ClusterCatalog community: cannot be read: GET http://x/: HTTP 500',
    ],
    [
      'the bundle not in the channel',
      { catalogs: [offer({ channels: [{ name: 'fast', entries: [{ name: 'widget-operator.v1.2.3' }] }] })] },
      'ClusterCatalog community: does not list widget-operator.v1.2.3 in channel "stable"',
    ],
    [
      'spec.config',
      { subscription: sub({ config: { env: [{ name: 'A', value: 'b' }] } }) },
      'Subscription operators/widgets: spec.config: sets env, which a ClusterExtension cannot express',
    ],
    [
      'a name too long for the owner-name label',
      { subscription: sub({}, 'w'.repeat(64)) },
      'metadata.name: "wwww',
    ],
    [
      'a channel v1 does not accept',
      { subscription: sub({ channel: 'Stable_1' }) },
      'spec.channel: "Stable_1" is not a channel name v1 accepts',
    ],
    [
      'a Manual Subscription on a version v1 cannot pin',
      { subscription: sub({ installPlanApproval: 'Manual' }), csv: csv({ version: '1.2.3.4' }) },
      'spec.version: "1.2.3.4" is no version v1 can pin',
    ],
    [
      'an install under way',
      {
        installPlans: [
          {
            metadata: { name: 'install-1', namespace: ns },
            spec: {
              clusterServiceVersionNames: ['widget-operator.v1.3.0'],
              approval: 'Automatic',
              approved: true,
            },
            status: { phase: 'Installing' },
          } as unknown as InstallPlan,
        ],
      },
      'InstallPlan operators/install-1: status.phase: is "Installing" and approved: an install is under way (widget-operator.v1.3.0)',
    ],
  ])('%s', (_, over, message) => {
    expect(refused(input(over)).join('\n')).toContain(message);
  });

  it.each([
    ['olm.package.required', { packageName: 'base', versionRange: '>=1.0.0' }],
    ['olm.gvk.required', { group: 'base.io', kind: 'Base', version: 'v1' }],
    ['olm.constraint', { failureMessage: 'needs base', cel: { rule: 'true' } }],
    ['olm.label.required', { label: 'x' }],
  ])('a bundle with a %s property: the dependency is named', (type, value) => {
    const bundles = [
      {
        name: 'widget-operator.v1.2.3',
        properties: [
          { type: 'olm.package', value: {} },
          { type, value },
        ],
      },
    ];
    expect(refused(input({ catalogs: [offer({ bundles })] }))).toEqual([
      `ClusterCatalog community: bundle widget-operator.v1.2.3: properties[1]: ${type} ${JSON.stringify(value)}: the bundle depends on another operator, and only operators without dependencies are migrated`,
    ]);
  });

  it('a dependency of any length is shown in a line of bounded length', () => {
    const value = { packageName: 'x'.repeat(1_000_000), versionRange: '>=1' };
    const bundles = [
      { name: 'widget-operator.v1.2.3', properties: [{ type: 'olm.package.required', value }] },
    ];
    const [line] = refused(input({ catalogs: [offer({ bundles })] }));
    expect(line).toContain('olm.package.required {"packageName":"xxx');
    expect(line).toContain(`… (${JSON.stringify(value).length} characters)`);
    expect(line!.length).toBeLessThan(500);
  });

  it('a CSV that requires a CRD or an API service names the CSV and Subscription that provide it', () => {
    const base = {
      ...csv({
        customresourcedefinitions: { owned: [{ name: 'bases.base.io', version: 'v1', kind: 'Base' }] },
      }),
      metadata: { name: 'base.v1.0.0', namespace: 'base-ns', uid: 'base-uid' },
    } as ClusterServiceVersion;
    const copy = {
      ...base,
      metadata: { ...base.metadata, namespace: ns, uid: 'copy', labels: { 'olm.copiedFrom': 'base-ns' } },
    };
    const baseSub = {
      ...sub({ name: 'base' }, 'base'),
      metadata: { name: 'base', namespace: 'base-ns' },
      status: { installedCSV: 'base.v1.0.0', lastUpdated: '' },
    } as Subscription;
    const needy = csv({
      customresourcedefinitions: { required: [{ name: 'bases.base.io', version: 'v1', kind: 'Base' }] },
      apiservicedefinitions: {
        required: [{ name: 'v1.metrics.io', group: 'metrics.io', version: 'v1', kind: 'M' }],
      },
    });
    expect(
      refused(input({ csv: needy, csvs: [base, copy, needy], subscriptions: [sub(), baseSub] })),
    ).toEqual([
      'ClusterServiceVersion operators/widget-operator.v1.2.3: spec.customresourcedefinitions.required[0]: requires bases.base.io (v1), provided by ClusterServiceVersion base-ns/base.v1.0.0 of Subscription base-ns/base; only operators without dependencies are migrated',
      'ClusterServiceVersion operators/widget-operator.v1.2.3: spec.apiservicedefinitions.required[0]: requires v1.metrics.io, provided by no CSV installed; only operators without dependencies are migrated',
    ]);
  });

  it('every reason is given at once', () => {
    const lines = refused(
      input({
        operatorGroups: [group({ targetNamespaces: ['a'] })],
        extensions: [ext('owner', 'widget-operator')],
        csv: csv({}, 'Failed'),
      }),
    );
    expect(lines).toHaveLength(4);
  });
});

describe('--timeout and the wait’s last words', () => {
  it.each([
    ['2m', 120_000],
    ['90s', 90_000],
    ['1m30s', 90_000],
    ['1h', 3_600_000],
    ['45', 45_000],
    ['1500ms', 1_500],
  ])('%s is %d ms', (text, ms) => expect(parseTimeout(text)).toBe(ms));
  it.each(['', '2x', 'm', '-5s', '1m 30s', '2m!'])('%j is refused', (text) =>
    expect(parseTimeout(text)).toBeUndefined(),
  );

  it('says what the extension last reported', () => {
    const seen = {
      ...ext('widgets', 'widget-operator'),
      status: {
        conditions: [
          {
            type: 'Progressing',
            status: 'True',
            reason: 'Retrying',
            message: 'resolving',
            lastTransitionTime: '',
          },
        ],
      },
    } as ClusterExtension;
    expect(describeExtension(seen, false, 'w.v1')).toBe(
      'no Installed condition; Progressing True (Retrying: resolving); installed bundle none; ClusterServiceVersion w.v1 not owned by the extension yet',
    );
    expect(describeExtension(undefined, false, 'w.v1')).toBe('the ClusterExtension is gone');
  });
});
