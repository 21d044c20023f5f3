import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DeclarativeConfig } from '../../../src/apis/fbc.js';
import type { ClusterServiceVersion, InstallPlan, Subscription } from '../../../src/apis/operators.js';
import type { PackageManifest } from '../../../src/apis/packages.js';
import { loadCatalog } from '../../../src/catalog/load.js';
import { withPayloadsAll } from '../../../src/catalog/payloads.js';
import { packageManifests } from '../../../src/packages/projection.js';
import {
  type CatalogContent,
  channelViews,
  clipLabel,
  installViews,
  MaxLabelChars,
  packageDetail,
  packageIcon,
  packageSummary,
  safeUrl,
} from '../../../src/web/view.js';
import { renderDescription } from '../../../src/web/markdown.js';
import { repo } from '../cli/run-bosun.js';

let samples: CatalogContent;
const manifest = (name: string) => samples.manifests.find((m) => m.status.packageName === name)!;

beforeAll(async () => {
  const loaded = await loadCatalog(join(repo, 'catalogs/bosun-samples'));
  if (!loaded.ok) throw new Error(JSON.stringify(loaded.errors));
  const manifests = await packageManifests(
    loaded.value,
    { name: 'samples', namespace: 'olm' },
    withPayloadsAll,
  );
  samples = {
    info: { id: 'olm/samples', name: 'samples', namespace: 'olm', displayName: 'Samples' },
    config: loaded.value,
    manifests,
  };
});

describe('packageSummary', () => {
  it('reads a card from the default channel head`s CSV', () => {
    const s = packageSummary(samples, manifest('bosun-sample'));
    expect(s).toMatchObject({
      id: 'olm/samples/bosun-sample',
      catalog: 'olm/samples',
      name: 'bosun-sample',
      displayName: 'Bosun Sample Operator',
      description: 'Bosun Sample Operator, a sample operator for Bosun.',
      provider: 'Bosun',
      keywords: ['sample', 'widgets'],
      categories: ['Developer Tools'],
      capability: 'Basic Install',
      installModes: ['OwnNamespace', 'SingleNamespace', 'AllNamespaces'],
      defaultChannel: 'stable',
      version: '0.2.1',
      installs: [],
    });
    expect(s.icon).toMatch(/^api\/icons\/olm%2Fsamples\/bosun-sample\?v=[0-9a-f]{16}$/);
  });
});

describe('names a card shows, from a catalog that makes them as long as it likes', () => {
  const long = (letter: string, n: number) => letter.repeat(n);
  const withLongNames = (): PackageManifest => {
    const m = structuredClone(manifest('bosun-sample'));
    for (const c of m.status.channels) {
      const d = c.currentCSVDesc;
      d.displayName = long('M', 1_000_000);
      d.provider = { name: long('W', 50_000) };
      d.keywords = [long('k', 20_000), 'short'];
      d.annotations = {
        ...d.annotations,
        categories: `${long('c', 10_000)},Tools`,
        capabilities: long('l', 10_000),
      };
    }
    return m;
  };

  it('are cut to MaxLabelChars, ending in …, and short ones are kept whole', () => {
    const s = packageSummary(samples, withLongNames());
    expect(s.displayName).toBe(`${long('M', MaxLabelChars - 1)}…`);
    expect(s.provider).toBe(`${long('W', MaxLabelChars - 1)}…`);
    expect(s.keywords).toEqual([`${long('k', MaxLabelChars - 1)}…`, 'short']);
    expect(s.categories).toEqual([`${long('c', MaxLabelChars - 1)}…`, 'Tools']);
    expect(s.capability).toBe(`${long('l', MaxLabelChars - 1)}…`);
    // Nothing in a card's JSON is longer than a label or the first paragraph (280).
    const strings = JSON.stringify(s).match(/"(?:[^"\\]|\\.)*"/g) ?? [];
    expect(Math.max(...strings.map((x) => x.length))).toBeLessThanOrEqual(282);
  });

  it('never cuts a character in half', () => {
    const emoji = '\u{1F680}'; // two UTF-16 units
    const text = `${long('a', MaxLabelChars - 2)}${emoji}${emoji}`;
    const clipped = clipLabel(text);
    expect(clipped).toBe(`${long('a', MaxLabelChars - 2)}…`);
    expect(clipLabel(long('b', MaxLabelChars))).toBe(long('b', MaxLabelChars));
  });
});

describe('packageIcon', () => {
  const withIcon = (icon: { base64data: string; mediatype: string }): PackageManifest => {
    const m = structuredClone(manifest('bosun-sample'));
    for (const c of m.status.channels) c.currentCSVDesc.icon = [icon];
    return m;
  };
  // Without the FBC package's own icon, so only the CSV's counts.
  const withoutPackageIcon = (): DeclarativeConfig => ({ ...samples.config, packages: [] });

  it.each([
    ['an SVG', { base64data: 'PHN2Zy8+', mediatype: 'image/svg+xml' }, 'image/svg+xml'],
    [
      'a PNG, type in capitals and base64 wrapped',
      { base64data: 'iVBO\nRw0K', mediatype: 'IMAGE/PNG' },
      'image/png',
    ],
    ['HTML posing as an icon', { base64data: 'PHNjcmlwdD4=', mediatype: 'text/html' }, undefined],
    ['no type', { base64data: 'PHN2Zy8+', mediatype: '' }, undefined],
    [
      'data that is not base64',
      { base64data: '<svg onload=alert(1)>', mediatype: 'image/svg+xml' },
      undefined,
    ],
  ])('%s', (_, icon, type) => {
    const got = packageIcon(withIcon(icon), withoutPackageIcon());
    expect(got?.mediatype).toBe(type);
  });
});

describe('safeUrl', () => {
  it.each([
    ['https://etcd.io/docs', 'https://etcd.io/docs'],
    ['  http://x.example  ', 'http://x.example/'],
    ['mailto:a@b.example', 'mailto:a@b.example'],
    ['javascript:alert(1)', undefined],
    [' JAVASCRIPT:alert(1)', undefined],
    ['data:text/html,x', undefined],
    ['/relative', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('%j → %j', (url, expected) => {
    expect(safeUrl(url)).toBe(expected);
  });
});

describe('channelViews', () => {
  it('lists a channel newest first with its replaces and skips edges', () => {
    const stable = channelViews(samples.config, manifest('bosun-sample')).find((c) => c.name === 'stable')!;
    expect(stable.head).toBe('bosun-sample.v0.2.1');
    expect(stable.headVersion).toBe('0.2.1');
    expect(stable.entries.map((e) => e.version)).toEqual(['0.2.1', '0.2.0', '0.1.1', '0.1.0']);
    expect(stable.edges).toEqual([
      { from: 'bosun-sample.v0.1.0', to: 'bosun-sample.v0.1.1', kind: 'replaces' },
      { from: 'bosun-sample.v0.1.1', to: 'bosun-sample.v0.2.0', kind: 'replaces' },
      { from: 'bosun-sample.v0.1.1', to: 'bosun-sample.v0.2.1', kind: 'replaces' },
      { from: 'bosun-sample.v0.2.0', to: 'bosun-sample.v0.2.1', kind: 'skips' },
    ]);
  });

  it('turns a skipRange into an edge from every entry of the channel in the range', () => {
    const config = structuredClone(samples.config);
    const stable = config.channels.find((c) => c.package === 'bosun-sample' && c.name === 'stable')!;
    stable.entries = stable.entries.map((e) =>
      e.name === 'bosun-sample.v0.2.1' ? { name: e.name, skipRange: '>=0.1.0 <0.2.1' } : e,
    );
    const view = channelViews(config, manifest('bosun-sample')).find((c) => c.name === 'stable')!;
    expect(view.edges.filter((e) => e.kind === 'skipRange').map((e) => e.from)).toEqual([
      'bosun-sample.v0.2.0',
      'bosun-sample.v0.1.1',
      'bosun-sample.v0.1.0',
    ]);
    expect(view.entries[0]).toMatchObject({ name: 'bosun-sample.v0.2.1', skipRange: '>=0.1.0 <0.2.1' });
  });
});

describe('packageDetail', () => {
  it('has the page`s parts: sanitised description, links, maintainers, APIs, channels, install context', () => {
    const install = { source: { name: 'samples', namespace: 'olm' } };
    const d = packageDetail(samples, manifest('bosun-sample-dashboard'), {
      installs: [],
      install,
      render: renderDescription,
    });
    expect(d.descriptionHtml).toContain('<p>The Bosun sample dashboard');
    expect(d.descriptionTruncated).toBe(false);
    expect(d.links).toEqual([
      { name: 'Source', url: 'https://bosun.example/samples/bosun-sample-dashboard' },
      { name: 'Repository', url: 'https://bosun.example/samples' },
    ]);
    expect(d.maintainers).toEqual([{ name: 'Bosun maintainers', email: 'maintainers@bosun.example' }]);
    expect(d.apis.owned.map((a) => a.name)).toEqual(['dashboards.dashboard.bosun.dev']);
    expect(d.apis.required).toEqual([
      {
        name: 'widgets.sample.bosun.dev',
        version: 'v1alpha1',
        kind: 'Widget',
        displayName: 'Widget',
        description: 'The widgets the dashboard shows.',
      },
    ]);
    expect(d.channels.map((c) => c.name)).toEqual(['stable']);
    expect(d.install).toBe(install);
    expect(d.maturity).toBe('alpha');
    expect(d.minKubeVersion).toBe('1.25.0');
  });
});

describe('installViews', () => {
  const sub = (
    ns: string,
    status: Subscription['status'],
    spec: Partial<Subscription['spec']> = {},
  ): Subscription => ({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: 'bosun-sample', namespace: ns },
    spec: { name: 'bosun-sample', source: 'samples', sourceNamespace: 'olm', channel: 'stable', ...spec },
    ...(status ? { status } : {}),
  });
  const csv = (ns: string, name: string, version: string, phase: string): ClusterServiceVersion =>
    ({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'ClusterServiceVersion',
      metadata: { name, namespace: ns },
      spec: { version, displayName: 'x', install: { strategy: 'deployment' } },
      status: { phase },
    }) as unknown as ClusterServiceVersion;
  const plan = (ns: string, name: string, target: string, approved: boolean): InstallPlan =>
    ({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'InstallPlan',
      metadata: { name, namespace: ns },
      spec: { clusterServiceVersionNames: [target], approval: 'Manual', approved },
      status: { phase: approved ? 'Complete' : 'RequiresApproval' },
    }) as unknown as InstallPlan;
  const head = (catalog: string, pkg: string, channel: string | undefined) =>
    catalog === 'olm/samples' && pkg === 'bosun-sample' && channel === 'stable'
      ? { csv: 'bosun-sample.v0.2.1', version: '0.2.1' }
      : undefined;
  const status = (s: Partial<NonNullable<Subscription['status']>>) => ({ lastUpdated: '', ...s });

  it('shows each Subscription with its installed version, CSV phase, and the upgrade waiting for it', () => {
    const views = installViews(
      {
        subscriptions: [
          sub(
            'at-latest',
            status({
              installedCSV: 'bosun-sample.v0.2.1',
              currentCSV: 'bosun-sample.v0.2.1',
              state: 'AtLatestKnown',
            }),
          ),
          sub(
            'pending',
            status({
              installedCSV: 'bosun-sample.v0.1.1',
              currentCSV: 'bosun-sample.v0.2.1',
              state: 'UpgradePending',
              installPlanRef: { name: 'install-2', namespace: 'pending' },
            }),
            { installPlanApproval: 'Manual' },
          ),
          sub(
            'behind',
            status({
              installedCSV: 'bosun-sample.v0.1.0',
              currentCSV: 'bosun-sample.v0.1.0',
              state: 'AtLatestKnown',
            }),
          ),
          sub(
            'first',
            status({
              currentCSV: 'bosun-sample.v0.2.1',
              state: 'UpgradePending',
              installPlanRef: { name: 'install-1', namespace: 'first' },
            }),
            { installPlanApproval: 'Manual' },
          ),
        ],
        csvs: [
          csv('at-latest', 'bosun-sample.v0.2.1', '0.2.1', 'Succeeded'),
          csv('pending', 'bosun-sample.v0.1.1', '0.1.1', 'Succeeded'),
          csv('behind', 'bosun-sample.v0.1.0', '0.1.0', 'Installing'),
        ],
        installPlans: [
          plan('pending', 'install-2', 'bosun-sample.v0.2.1', false),
          plan('first', 'install-1', 'bosun-sample.v0.2.1', false),
        ],
      },
      head,
    );
    expect([...views.keys()]).toEqual(['olm/samples/bosun-sample']);
    expect(views.get('olm/samples/bosun-sample')).toEqual([
      {
        namespace: 'at-latest',
        subscription: 'bosun-sample',
        channel: 'stable',
        approval: 'Automatic',
        state: 'AtLatestKnown',
        installedCSV: 'bosun-sample.v0.2.1',
        installedVersion: '0.2.1',
        phase: 'Succeeded',
      },
      {
        namespace: 'behind',
        subscription: 'bosun-sample',
        channel: 'stable',
        approval: 'Automatic',
        state: 'AtLatestKnown',
        installedCSV: 'bosun-sample.v0.1.0',
        installedVersion: '0.1.0',
        phase: 'Installing',
        // The catalog's channel has moved on; the Subscription has not resolved it yet.
        upgrade: { csv: 'bosun-sample.v0.2.1', version: '0.2.1', waitsForApproval: false },
      },
      {
        namespace: 'first',
        subscription: 'bosun-sample',
        channel: 'stable',
        approval: 'Manual',
        state: 'UpgradePending',
        installWaitsForApproval: true,
      },
      {
        namespace: 'pending',
        subscription: 'bosun-sample',
        channel: 'stable',
        approval: 'Manual',
        state: 'UpgradePending',
        installedCSV: 'bosun-sample.v0.1.1',
        installedVersion: '0.1.1',
        phase: 'Succeeded',
        upgrade: { csv: 'bosun-sample.v0.2.1', version: '0.2.1', waitsForApproval: true },
      },
    ]);
  });

  it('takes a Subscription without sourceNamespace to read its own namespace`s catalog', () => {
    const s = sub('team', status({}), { sourceNamespace: '' });
    expect([
      ...installViews({ subscriptions: [s], csvs: [], installPlans: [] }, () => undefined).keys(),
    ]).toEqual(['team/samples/bosun-sample']);
  });
});
