import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { type BundleDoc, type DeclarativeConfig, emptyConfig } from '../../../src/apis/fbc.js';
import { importOperatorsDir } from '../../../src/catalog/import.js';
import { withPayloadsAll } from '../../../src/catalog/payloads.js';
import { loadCatalog } from '../../../src/catalog/load.js';
import { bundleCSV, inMemoryPayloads, packageManifests } from '../../../src/packages/projection.js';

const source = { name: 'community', namespace: 'olm', displayName: 'Community', publisher: 'Someone' };
const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64');

function csv(name: string, version: string, extra: Record<string, unknown> = {}) {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name, annotations: { capabilities: 'Basic Install' }, labels: {} },
    spec: {
      displayName: `Op ${version}`,
      version,
      description: '# Op\nDoes things.',
      provider: { name: `Provider ${version}`, url: 'https://example.com' },
      icon: [{ base64data: 'PHN2Zz48L3N2Zz4=', mediatype: 'image/svg+xml' }],
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'AllNamespaces', supported: false },
      ],
      customresourcedefinitions: {
        owned: [
          {
            name: 'widgets.example.com',
            version: 'v1',
            kind: 'Widget',
            displayName: 'Widget',
            specDescriptors: [{ path: 'x' }],
          },
        ],
      },
      install: {
        strategy: 'deployment',
        spec: {
          deployments: [
            {
              name: 'op',
              spec: { template: { spec: { containers: [{ name: 'c', image: `quay.io/op:${version}` }] } } },
            },
          ],
        },
      },
      relatedImages: [{ name: 'extra', image: 'quay.io/extra:1' }],
      ...extra,
    },
  };
}

function bundle(
  name: string,
  version: string,
  props: BundleDoc['properties'] = [],
  csvDoc: unknown = csv(name, version),
): BundleDoc {
  return {
    schema: 'olm.bundle',
    package: 'op',
    name,
    image: '',
    properties: [
      { type: 'olm.package', value: { packageName: 'op', version } },
      { type: 'olm.bundle.object', value: { data: b64(csvDoc) } },
      ...props,
    ],
  };
}

function catalog(): DeclarativeConfig {
  const c = emptyConfig();
  c.packages.push({ schema: 'olm.package', name: 'op', defaultChannel: 'stable' });
  c.channels.push(
    {
      schema: 'olm.channel',
      package: 'op',
      name: 'stable',
      entries: [
        { name: 'op.v1.0.0' },
        { name: 'op.v1.1.0', replaces: 'op.v1.0.0' },
        { name: 'op.v0.9.0' },
        { name: 'op.v1.2.0', replaces: 'op.v1.1.0', skips: ['op.v0.9.0'] },
      ],
    },
    { schema: 'olm.channel', package: 'op', name: 'alpha', entries: [{ name: 'op.v2.0.0-alpha' }] },
  );
  c.bundles.push(
    bundle('op.v0.9.0', '0.9.0', [{ type: 'olm.deprecated', value: {} }]),
    bundle('op.v1.0.0', '1.0.0'),
    bundle('op.v1.1.0', '1.1.0'),
    bundle('op.v1.2.0', '1.2.0'),
    bundle(
      'op.v2.0.0-alpha',
      '2.0.0-alpha',
      [],
      csv('op.v2.0.0-alpha', '2.0.0-alpha', { provider: { name: 'Alpha provider' } }),
    ),
  );
  c.deprecations.push({
    schema: 'olm.deprecations',
    package: 'op',
    entries: [
      { reference: { schema: 'olm.channel', name: 'alpha' }, message: 'alpha is over' },
      { reference: { schema: 'olm.bundle', name: 'op.v1.0.0' }, message: 'upgrade' },
    ],
  });
  return c;
}

describe('packageManifests', () => {
  it('fills a PackageManifest as OLM does: channels by name, heads described, entries newest first, deprecations', async () => {
    const [pm, ...rest] = await packageManifests(
      catalog(),
      { ...source, labels: { team: 'a' }, creationTimestamp: '2026-01-01T00:00:00Z' },
      inMemoryPayloads,
    );
    expect(rest).toEqual([]);
    expect(pm!.metadata).toEqual({
      name: 'op',
      namespace: 'olm',
      creationTimestamp: '2026-01-01T00:00:00Z',
      labels: {
        team: 'a',
        catalog: 'community',
        'catalog-namespace': 'olm',
        provider: 'Provider 1.2.0',
        'provider-url': 'https://example.com',
        'operatorframework.io/os.linux': 'supported',
        'operatorframework.io/arch.amd64': 'supported',
      },
    });
    const s = pm!.status;
    expect(s).toMatchObject({
      catalogSource: 'community',
      catalogSourceDisplayName: 'Community',
      catalogSourcePublisher: 'Someone',
      catalogSourceNamespace: 'olm',
      packageName: 'op',
      defaultChannel: 'stable',
      provider: { name: 'Provider 1.2.0', url: 'https://example.com' },
    });
    expect(s.channels.map((c) => c.name)).toEqual(['alpha', 'stable']);
    const stable = s.channels[1]!;
    expect(stable.currentCSV).toBe('op.v1.2.0');
    // The legacy olm.deprecated bundle is left out of the entries; the deprecated one is marked.
    expect(stable.entries).toEqual([
      { name: 'op.v1.2.0', version: '1.2.0' },
      { name: 'op.v1.1.0', version: '1.1.0' },
      { name: 'op.v1.0.0', version: '1.0.0', deprecation: { message: 'upgrade' } },
    ]);
    expect(s.channels[0]!.deprecation).toEqual({ message: 'alpha is over' });
    const d = stable.currentCSVDesc;
    expect(d).toMatchObject({
      displayName: 'Op 1.2.0',
      version: '1.2.0',
      description: '# Op\nDoes things.',
      annotations: { capabilities: 'Basic Install' },
      icon: [{ base64data: 'PHN2Zz48L3N2Zz4=', mediatype: 'image/svg+xml' }],
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'AllNamespaces', supported: false },
      ],
      relatedImages: ['quay.io/extra:1', 'quay.io/op:1.2.0'],
      links: [],
      maintainers: [],
    });
    // API descriptions keep only OLM's fields.
    expect(d.customresourcedefinitions).toEqual({
      owned: [{ name: 'widgets.example.com', version: 'v1', kind: 'Widget', displayName: 'Widget' }],
      required: [],
    });
  });

  it('takes the provider from the default channel, and falls back to the first channel when the default cannot be described', async () => {
    const c = catalog();
    c.packages[0]!.defaultChannel = 'alpha';
    expect((await packageManifests(c, source, inMemoryPayloads))[0]!.status.provider).toEqual({
      name: 'Alpha provider',
    });
    // A head without a CSV elides its channel; the default moves to the first one left.
    c.bundles = c.bundles.map((b) =>
      b.name === 'op.v2.0.0-alpha' ? { ...b, properties: b.properties.slice(0, 1) } : b,
    );
    const [pm] = await packageManifests(c, source, inMemoryPayloads);
    expect(pm!.status.channels.map((ch) => ch.name)).toEqual(['stable']);
    expect(pm!.status.defaultChannel).toBe('stable');
  });

  it('describes a bundle that has only olm.csv.metadata, as opm synthesizes its CSV', async () => {
    const c = catalog();
    c.bundles = c.bundles.map((b) =>
      b.name !== 'op.v1.2.0'
        ? b
        : {
            ...b,
            relatedImages: [{ name: 'op', image: 'quay.io/op:1.2.0' }],
            properties: [
              b.properties[0]!,
              {
                type: 'olm.csv.metadata',
                value: {
                  displayName: 'From metadata',
                  annotations: { 'operatorframework.io/suggested-namespace': 'op-system' },
                  provider: { name: 'Meta' },
                  keywords: ['k'],
                },
              },
            ],
          },
    );
    const [pm] = await packageManifests(c, source, inMemoryPayloads);
    const stable = pm!.status.channels.find((ch) => ch.name === 'stable')!;
    expect(stable.currentCSVDesc).toMatchObject({
      displayName: 'From metadata',
      version: '1.2.0',
      keywords: ['k'],
      provider: { name: 'Meta' },
      relatedImages: ['quay.io/op:1.2.0'],
    });
    // The suggested namespace also goes onto the PackageManifest itself.
    expect(pm!.metadata.annotations).toEqual({ 'operatorframework.io/suggested-namespace': 'op-system' });
  });

  it('keeps the CSV labels of the default channel head, and no default OS label when the CSV names one', async () => {
    const c = catalog();
    const labelled = csv('op.v1.2.0', '1.2.0');
    labelled.metadata.labels = { 'operatorframework.io/os.windows': 'supported' } as never;
    c.bundles = c.bundles.map((b) =>
      b.name === 'op.v1.2.0' ? bundle('op.v1.2.0', '1.2.0', [], labelled) : b,
    );
    const [pm] = await packageManifests(c, source, inMemoryPayloads);
    expect(pm!.metadata.labels).toMatchObject({
      'operatorframework.io/os.windows': 'supported',
      'operatorframework.io/arch.amd64': 'supported',
    });
    expect(pm!.metadata.labels).not.toHaveProperty('operatorframework.io/os.linux');
  });

  it('bundleCSV finds the CSV among YAML manifests and leaves other objects unparsed', () => {
    const yaml =
      'apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: y.v1\nspec:\n  version: 1.0.0\n';
    const doc: BundleDoc = {
      schema: 'olm.bundle',
      package: 'y',
      name: 'y.v1',
      image: '',
      properties: [
        {
          type: 'olm.bundle.object',
          value: { data: Buffer.from('kind: CustomResourceDefinition\n').toString('base64') },
        },
        { type: 'olm.bundle.object', value: { data: Buffer.from(yaml).toString('base64') } },
      ],
    };
    expect(bundleCSV(doc)).toMatchObject({ metadata: { name: 'y.v1' }, spec: { version: '1.0.0' } });
    expect(bundleCSV({ ...doc, properties: doc.properties.slice(0, 1) })).toBeUndefined();
  });

  it("reads one package's channel heads at a time, so a catalog's head manifests are never in memory at once", async () => {
    const c = catalog();
    // A second package, with a head of its own in each of two channels.
    c.packages.push({ schema: 'olm.package', name: 'other', defaultChannel: 'a' });
    for (const [ch, v] of [
      ['a', '1.0.0'],
      ['b', '2.0.0'],
    ] as const) {
      c.channels.push({
        schema: 'olm.channel',
        package: 'other',
        name: ch,
        entries: [{ name: `other.v${v}` }],
      });
      c.bundles.push({ ...bundle(`other.v${v}`, v), package: 'other' });
    }
    const calls: string[][] = [];
    const pms = await packageManifests(c, source, async (docs) => {
      calls.push(docs.map((d) => `${d.package}/${d.name}`));
      return inMemoryPayloads(docs);
    });
    expect(calls).toEqual([
      ['op/op.v2.0.0-alpha', 'op/op.v1.2.0'],
      ['other/other.v1.0.0', 'other/other.v2.0.0'],
    ]);
    // Each package still described from its own heads.
    expect(pms.map((p) => p.status.channels.map((ch) => ch.currentCSV))).toEqual([
      ['op.v2.0.0-alpha', 'op.v1.2.0'],
      ['other.v1.0.0', 'other.v2.0.0'],
    ]);
  });

  it("projects the repository's sample catalog", async () => {
    const loaded = await loadCatalog(new URL('../../../catalogs', import.meta.url).pathname);
    if (!loaded.ok) throw new Error('catalogs/ does not load');
    const pms = await packageManifests(loaded.value, source, (docs) => withPayloadsAll(docs));
    expect(pms.map((p) => p.metadata.name)).toEqual(['bosun-sample', 'bosun-sample-dashboard']);
    for (const pm of pms) expect(pm.status.channels.every((c) => c.currentCSVDesc.displayName)).toBe(true);
  });
});

const corpus = process.env.BOSUN_CORPUS_DIR;
const haveCorpus = !!corpus && existsSync(corpus);
if (!haveCorpus) console.warn('skipping the PackageManifest projection of the corpus: set BOSUN_CORPUS_DIR');

describe.skipIf(!haveCorpus)('packageManifests of the OperatorHub 2021 corpus (BOSUN_CORPUS_DIR)', () => {
  it(
    'projects every package, each channel described, with OLM fields on real packages',
    { timeout: 600_000 },
    async () => {
      const { config } = await importOperatorsDir(corpus!);
      const pms = await packageManifests(config, source, (docs) => withPayloadsAll(docs));
      expect(pms.map((p) => p.metadata.name)).toEqual(config.packages.map((p) => p.name).sort());
      for (const pm of pms) {
        expect(pm.status.channels.length, pm.metadata.name).toBeGreaterThan(0);
        expect(
          pm.status.channels.map((c) => c.name),
          pm.metadata.name,
        ).toContain(pm.status.defaultChannel);
        for (const ch of pm.status.channels) {
          expect(
            ch.entries.map((e) => e.name),
            `${pm.metadata.name}/${ch.name}`,
          ).toContain(ch.currentCSV);
          expect(ch.currentCSVDesc.version, `${pm.metadata.name}/${ch.name}`).toBeTruthy();
        }
      }
      const byName = new Map(pms.map((p) => [p.metadata.name, p]));

      const etcd = byName.get('etcd')!;
      expect(etcd.status.defaultChannel).toBe('singlenamespace-alpha');
      expect(etcd.status.channels.map((c) => c.name)).toEqual([
        'alpha',
        'clusterwide-alpha',
        'singlenamespace-alpha',
      ]);
      const sna = etcd.status.channels.find((c) => c.name === 'singlenamespace-alpha')!;
      expect(sna.currentCSV).toBe('etcdoperator.v0.9.4');
      expect(sna.entries.map((e) => e.name)).toEqual([
        'etcdoperator.v0.9.4',
        'etcdoperator.v0.9.2',
        'etcdoperator.v0.9.0',
      ]);
      expect(sna.currentCSVDesc.annotations?.capabilities).toBe('Full Lifecycle');
      expect(sna.currentCSVDesc.icon?.[0]?.mediatype).toBe('image/png');
      expect(etcd.metadata.labels?.provider).toBe('CNCF');

      const prometheus = byName.get('prometheus')!;
      const head = prometheus.status.channels.find((c) => c.name === prometheus.status.defaultChannel)!;
      expect(head.currentCSVDesc.customresourcedefinitions?.owned?.map((c) => c.kind)).toContain(
        'Prometheus',
      );
      expect(head.currentCSVDesc.installModes?.some((m) => m.type === 'AllNamespaces')).toBe(true);
      expect(head.currentCSVDesc.relatedImages?.length).toBeGreaterThan(0);
    },
  );
});
