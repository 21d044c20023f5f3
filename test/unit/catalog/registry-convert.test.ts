/**
 * A registry server's answers made a DeclarativeConfig (src/catalog/grpc/convert.ts): what opm's
 * API carries comes back as the catalog had it, opm's made-up CSV is read back as the metadata it
 * came from, and answers that contradict each other or carry values no catalog may hold are
 * problems naming the object, never documents.
 */
import { describe, expect, it } from 'vitest';
import type { DeclarativeConfig } from '../../../src/apis/fbc.js';
import {
  bundleKey,
  bundlesToFetch,
  MaxPropertyDepth,
  type RegistryAnswers,
  registryToConfig,
} from '../../../src/catalog/grpc/convert.js';
import { jsonNestingDepth } from '../../../src/catalog/grpc/json-depth.js';
import type { RegistryBundle, RegistryPackage } from '../../../src/catalog/grpc/wire.js';
import { CatalogLimits } from '../../../src/catalog/limits.js';

const pkgProp = (name: string, version: string) => ({
  type: 'olm.package',
  value: JSON.stringify({ packageName: name, version }),
});

function bundle(name: string, version: string, over: Partial<RegistryBundle> = {}): RegistryBundle {
  return {
    csvName: name,
    packageName: 'relay',
    channelName: 'stable',
    csvJson: '',
    object: [],
    bundlePath: `quay.example/relay-bundle:v${version}`,
    version,
    skipRange: '',
    properties: [pkgProp('relay', version)],
    replaces: '',
    skips: [],
    deprecation: null,
    ...over,
  };
}

function pkg(channels: [string, string][], over: Partial<RegistryPackage> = {}): RegistryPackage {
  return {
    name: 'relay',
    channels: channels.map(([name, csvName]) => ({ name, csvName, deprecation: null })),
    defaultChannelName: 'stable',
    deprecation: null,
    ...over,
  };
}

function answers(
  packages: RegistryPackage[],
  bundles: RegistryBundle[],
  manifests: RegistryBundle[] = [],
): RegistryAnswers {
  return {
    listed: packages.map((p) => p.name),
    packages,
    bundles,
    manifests: new Map(manifests.map((m) => [bundleKey(m.packageName, m.csvName), m])),
  };
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

/** The CSV opm v1.73 made up for a fixture bundle with olm.csv.metadata and no manifests (as served). */
const OPM_STUB =
  '{"kind":"ClusterServiceVersion","apiVersion":"operators.coreos.com/v1alpha1","metadata":{"name":"p.v1.0.0","annotations":{"alm-examples":"[]"}},"spec":{"install":{"strategy":"deployment","spec":{"deployments":null}},"version":"1.0.0","customresourcedefinitions":{},"apiservicedefinitions":{},"displayName":"P","description":"the package","provider":{"name":"Someone"},"icon":[{"base64data":"PHN2Zz48L3N2Zz4=","mediatype":"image/svg+xml"}],"installModes":[{"type":"AllNamespaces","supported":true}],"cleanup":{"enabled":false},"relatedImages":[{"name":"op","image":"quay.example/p:v1.0.0"}]},"status":{"cleanup":{}}}';

/** The parts of opm's stub the cases below change. */
interface StubCSV {
  kind: string;
  spec: { install: { strategy: string; spec: { deployments: unknown; permissions?: unknown } } };
}

function converted(a: RegistryAnswers): DeclarativeConfig {
  const { config, problems } = registryToConfig(a);
  expect(problems).toEqual([]);
  return config;
}

describe('registry answers as a catalog', () => {
  it('packages, channels and their entries, bundles with properties and manifests, and deprecations', () => {
    const crd = '{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition"}';
    const config = converted(
      answers(
        [pkg([['stable', 'relay.v1.1.0']], { deprecation: { message: 'gone' } })],
        [
          bundle('relay.v1.1.0', '1.1.0', {
            replaces: 'relay.v1.0.0',
            skips: ['relay.v0.9.0'],
            skipRange: '>=0.5.0 <1.0.0',
            bundlePath: '',
            object: [crd],
            properties: [
              pkgProp('relay', '1.1.0'),
              { type: 'olm.gvk', value: '{"group":"g","kind":"K","version":"v1"}' },
            ],
          }),
          bundle('relay.v1.0.0', '1.0.0', { deprecation: { message: 'old' } }),
        ],
      ),
    );
    expect(config).toEqual({
      packages: [{ schema: 'olm.package', name: 'relay', defaultChannel: 'stable' }],
      channels: [
        {
          schema: 'olm.channel',
          package: 'relay',
          name: 'stable',
          entries: [
            { name: 'relay.v1.0.0' },
            {
              name: 'relay.v1.1.0',
              replaces: 'relay.v1.0.0',
              skips: ['relay.v0.9.0'],
              skipRange: '>=0.5.0 <1.0.0',
            },
          ],
        },
      ],
      bundles: [
        {
          schema: 'olm.bundle',
          package: 'relay',
          name: 'relay.v1.0.0',
          image: 'quay.example/relay-bundle:v1.0.0',
          properties: [{ type: 'olm.package', value: { packageName: 'relay', version: '1.0.0' } }],
        },
        {
          schema: 'olm.bundle',
          package: 'relay',
          name: 'relay.v1.1.0',
          image: '',
          properties: [
            { type: 'olm.package', value: { packageName: 'relay', version: '1.1.0' } },
            { type: 'olm.gvk', value: { group: 'g', kind: 'K', version: 'v1' } },
            { type: 'olm.bundle.object', value: { data: b64(crd) } },
          ],
        },
      ],
      deprecations: [
        {
          schema: 'olm.deprecations',
          package: 'relay',
          entries: [
            { reference: { schema: 'olm.package' }, message: 'gone' },
            { reference: { schema: 'olm.bundle', name: 'relay.v1.0.0' }, message: 'old' },
          ],
        },
      ],
      others: [],
    });
  });

  it('a bundle ListBundles sends in two channels is one document, with its own entry in each channel', () => {
    const config = converted(
      answers(
        [
          pkg(
            [
              ['fast', 'relay.v1.2.0'],
              ['stable', 'relay.v1.2.0'],
            ],
            {
              channels: [
                { name: 'fast', csvName: 'relay.v1.2.0', deprecation: { message: 'use stable' } },
                { name: 'stable', csvName: 'relay.v1.2.0', deprecation: null },
              ],
            },
          ),
        ],
        [
          bundle('relay.v1.2.0', '1.2.0', { channelName: 'fast', replaces: 'relay.v1.1.1' }),
          bundle('relay.v1.1.0', '1.1.0'),
          bundle('relay.v1.2.0', '1.2.0', { replaces: 'relay.v1.1.0', skips: ['relay.v1.1.1'] }),
        ],
      ),
    );
    expect(config.bundles.map((b) => b.name)).toEqual(['relay.v1.1.0', 'relay.v1.2.0']);
    expect(config.channels.map((c) => [c.name, c.entries])).toEqual([
      ['fast', [{ name: 'relay.v1.2.0', replaces: 'relay.v1.1.1' }]],
      [
        'stable',
        [
          { name: 'relay.v1.1.0' },
          { name: 'relay.v1.2.0', replaces: 'relay.v1.1.0', skips: ['relay.v1.1.1'] },
        ],
      ],
    ]);
    expect(config.deprecations[0]?.entries).toEqual([
      { reference: { schema: 'olm.channel', name: 'fast' }, message: 'use stable' },
    ]);
  });

  it('entries are written oldest version first, whatever order ListBundles sends them in', () => {
    const versions = ['1.10.0', '1.2.0', '1.9.0-rc.1', '1.9.0', '0.1.0'];
    const bundles = versions.map((v, i) => bundle(`relay.v${v}`, v, i === 0 ? {} : { replaces: '' }));
    // A single head: each replaces the next older one.
    const sorted = ['0.1.0', '1.2.0', '1.9.0-rc.1', '1.9.0', '1.10.0'];
    for (const b of bundles) {
      const i = sorted.indexOf(b.version);
      if (i > 0) b.replaces = `relay.v${sorted[i - 1]}`;
    }
    const config = converted(answers([pkg([['stable', 'relay.v1.10.0']])], bundles));
    expect(config.channels[0]?.entries.map((e) => e.name)).toEqual(sorted.map((v) => `relay.v${v}`));
  });

  it('manifests come from GetBundle for a bundle with an image, one call per bundle, asked in its first channel', () => {
    const bundles = [
      bundle('relay.v1.0.0', '1.0.0', { channelName: 'fast' }),
      bundle('relay.v1.0.0', '1.0.0'),
      bundle('relay.v1.1.0', '1.1.0', { bundlePath: '', object: ['{}'], replaces: 'relay.v1.0.0' }),
      bundle('relay.v1.2.0', '1.2.0', { object: ['{}'], replaces: 'relay.v1.1.0' }),
    ];
    expect(bundlesToFetch(bundles)).toEqual([
      { pkgName: 'relay', channelName: 'fast', csvName: 'relay.v1.0.0' },
    ]);
    const fetched = bundle('relay.v1.0.0', '1.0.0', {
      object: ['{"kind":"ConfigMap"}', '{"kind":"Secret"}'],
    });
    const config = converted(
      answers(
        [
          pkg([
            ['fast', 'relay.v1.0.0'],
            ['stable', 'relay.v1.2.0'],
          ]),
        ],
        bundles,
        [fetched],
      ),
    );
    const objects = config.bundles[0]!.properties.filter((p) => p.type === 'olm.bundle.object');
    expect(objects).toEqual([
      { type: 'olm.bundle.object', value: { data: b64('{"kind":"ConfigMap"}') } },
      { type: 'olm.bundle.object', value: { data: b64('{"kind":"Secret"}') } },
    ]);
  });

  it('opm’s made-up CSV is read back as olm.csv.metadata, relatedImages and the package icon, never as a manifest', () => {
    const stub = bundle('p.v1.0.0', '1.0.0', {
      packageName: 'p',
      csvJson: OPM_STUB,
      object: [OPM_STUB],
      properties: [pkgProp('p', '1.0.0')],
    });
    const config = converted(
      answers(
        [pkg([['stable', 'p.v1.0.0']], { name: 'p' })],
        [bundle('p.v1.0.0', '1.0.0', { packageName: 'p', properties: [pkgProp('p', '1.0.0')] })],
        [stub],
      ),
    );
    expect(config.packages[0]?.icon).toEqual({ base64data: 'PHN2Zz48L3N2Zz4=', mediatype: 'image/svg+xml' });
    expect(config.bundles[0]).toEqual({
      schema: 'olm.bundle',
      package: 'p',
      name: 'p.v1.0.0',
      image: 'quay.example/relay-bundle:v1.0.0',
      properties: [
        { type: 'olm.package', value: { packageName: 'p', version: '1.0.0' } },
        {
          type: 'olm.csv.metadata',
          value: {
            annotations: { 'alm-examples': '[]' },
            apiServiceDefinitions: {},
            crdDescriptions: {},
            description: 'the package',
            displayName: 'P',
            installModes: [{ type: 'AllNamespaces', supported: true }],
            provider: { name: 'Someone' },
          },
        },
      ],
      relatedImages: [{ name: 'op', image: 'quay.example/p:v1.0.0' }],
    });
  });

  it.each([
    [
      'it has deployments',
      (csv: StubCSV) => (csv.spec.install.spec.deployments = [{ name: 'op', spec: {} }]),
    ],
    ['its deployments are an empty list', (csv: StubCSV) => (csv.spec.install.spec.deployments = [])],
    [
      'it has permissions beside',
      (csv: StubCSV) => (csv.spec.install.spec.permissions = [{ serviceAccountName: 'op', rules: [] }]),
    ],
    ['another strategy', (csv: StubCSV) => (csv.spec.install.strategy = 'other')],
    ['it is not a CSV', (csv: StubCSV) => (csv.kind = 'ConfigMap')],
  ])('a CSV is a manifest to install when %s', (_what, change) => {
    const csv = JSON.parse(OPM_STUB) as StubCSV;
    change(csv);
    const text = JSON.stringify(csv);
    const fetched = bundle('p.v1.0.0', '1.0.0', {
      packageName: 'p',
      csvJson: text,
      object: [text],
      properties: [pkgProp('p', '1.0.0')],
    });
    const config = converted(
      answers(
        [pkg([['stable', 'p.v1.0.0']], { name: 'p' })],
        [bundle('p.v1.0.0', '1.0.0', { packageName: 'p', properties: [pkgProp('p', '1.0.0')] })],
        [fetched],
      ),
    );
    expect(config.bundles[0]?.properties.map((p) => p.type)).toEqual(['olm.package', 'olm.bundle.object']);
    expect(config.packages[0]?.icon).toBeUndefined();
  });

  it('a stub among other objects, or not the csvJson, is a manifest too', () => {
    for (const over of [{ object: [OPM_STUB, '{}'] }, { object: [OPM_STUB], csvJson: '' }]) {
      const fetched = bundle('p.v1.0.0', '1.0.0', {
        packageName: 'p',
        csvJson: OPM_STUB,
        properties: [pkgProp('p', '1.0.0')],
        ...over,
      });
      const config = converted(
        answers(
          [pkg([['stable', 'p.v1.0.0']], { name: 'p' })],
          [bundle('p.v1.0.0', '1.0.0', { packageName: 'p', properties: [pkgProp('p', '1.0.0')] })],
          [fetched],
        ),
      );
      expect(config.bundles[0]?.properties.filter((p) => p.type === 'olm.bundle.object')).toHaveLength(
        over.object.length,
      );
    }
  });
});

describe('answers that contradict each other are problems naming the object', () => {
  const good = () =>
    answers(
      [
        pkg([
          ['fast', 'relay.v1.1.0'],
          ['stable', 'relay.v1.1.0'],
        ]),
      ],
      [
        bundle('relay.v1.0.0', '1.0.0'),
        bundle('relay.v1.1.0', '1.1.0', { replaces: 'relay.v1.0.0' }),
        bundle('relay.v1.1.0', '1.1.0', { channelName: 'fast' }),
      ],
    );
  type Mutable = {
    listed: string[];
    packages: RegistryPackage[];
    bundles: RegistryBundle[];
    manifests: Map<string, RegistryBundle>;
  };

  it('the unchanged answers have none', () => {
    expect(registryToConfig(good()).problems).toEqual([]);
  });

  it.each<[string, (a: Mutable) => void, { object: string; field?: string; message: RegExp }]>([
    [
      'a package listed twice',
      (a) => {
        a.listed.push('relay');
        a.packages.push(a.packages[0]!);
      },
      { object: 'package relay', message: /^ListPackages named this package more than once$/ },
    ],
    [
      'GetPackage answering for another package',
      (a) => (a.packages[0] = { ...a.packages[0]!, name: 'courier' }),
      { object: 'package relay', message: /^GetPackage answered for package "courier" instead$/ },
    ],
    [
      'a channel listed twice',
      (a) => a.packages[0]!.channels.push(a.packages[0]!.channels[0]!),
      {
        object: 'package relay',
        field: 'channels',
        message: /^GetPackage lists channel fast more than once$/,
      },
    ],
    [
      'a bundle of a package nobody listed',
      (a) => a.bundles.push(bundle('courier.v1.0.0', '1.0.0', { packageName: 'courier' })),
      {
        object: 'bundle courier.v1.0.0',
        field: 'packageName',
        message: /which ListPackages and GetPackage do not list/,
      },
    ],
    [
      'a bundle in a channel GetPackage does not list',
      (a) => a.bundles.push(bundle('relay.v0.9.0', '0.9.0', { channelName: 'beta' })),
      {
        object: 'bundle relay.v0.9.0',
        field: 'channelName',
        message: /channel "beta", which GetPackage does not list for package relay/,
      },
    ],
    [
      'a bundle sent twice in one channel',
      (a) => a.bundles.push(bundle('relay.v1.0.0', '1.0.0')),
      {
        object: 'bundle relay.v1.0.0',
        message: /^ListBundles sent it more than once in channel relay\/stable$/,
      },
    ],
    [
      'copies with another image',
      (a) => (a.bundles[2]!.bundlePath = 'quay.example/evil:v1'),
      {
        object: 'bundle relay.v1.1.0',
        field: 'bundlePath',
        message: /different in channels stable and fast/,
      },
    ],
    [
      'copies with other properties',
      (a) => a.bundles[2]!.properties.push({ type: 'olm.label', value: '{"label":"x"}' }),
      { object: 'bundle relay.v1.1.0', field: 'properties', message: /different in channels/ },
    ],
    [
      'copies with other manifests',
      (a) => {
        a.bundles[1]!.bundlePath = '';
        a.bundles[2]!.bundlePath = '';
        a.bundles[1]!.object = ['{}'];
        a.bundles[2]!.object = ['{"kind":"Secret"}'];
      },
      { object: 'bundle relay.v1.1.0', field: 'object', message: /different in channels/ },
    ],
    [
      'copies deprecated differently',
      (a) => (a.bundles[2]!.deprecation = { message: 'x' }),
      { object: 'bundle relay.v1.1.0', field: 'deprecation', message: /different in channels/ },
    ],
    [
      'a head the entries do not make',
      (a) => (a.packages[0]!.channels[1]!.csvName = 'relay.v1.0.0'),
      {
        object: 'channel relay/stable',
        message:
          /^GetPackage names relay\.v1\.0\.0 its head, but the entries ListBundles sent make relay\.v1\.1\.0 the head$/,
      },
    ],
    [
      'GetBundle answering for another bundle',
      (a) =>
        a.manifests.set(
          bundleKey('relay', 'relay.v1.0.0'),
          bundle('relay.v1.1.0', '1.1.0', { object: ['{}'] }),
        ),
      {
        object: 'bundle relay.v1.0.0',
        message: /^GetBundle answered for bundle "relay\.v1\.1\.0" of package "relay" instead$/,
      },
    ],
  ])('%s', (_what, change, expected) => {
    const a = good() as unknown as Mutable;
    change(a);
    const { problems } = registryToConfig(a);
    expect(problems).toContainEqual({
      object: expected.object,
      ...(expected.field ? { field: expected.field } : {}),
      message: expect.stringMatching(expected.message),
    });
  });
});

describe('values no catalog may hold are problems, not documents', () => {
  const withValue = (value: string, type = 'olm.label') =>
    registryToConfig(
      answers(
        [pkg([['stable', 'relay.v1.0.0']])],
        [bundle('relay.v1.0.0', '1.0.0', { properties: [pkgProp('relay', '1.0.0'), { type, value }] })],
      ),
    );
  const deep = (n: number, open: string, close: string, inner = '1') =>
    open.repeat(n) + inner + close.repeat(n);

  it.each([
    ['empty', ''],
    ['cut short', '{"label":'],
    ['not JSON at all', 'undefined'],
    ['two values', '{"label":"a"}{"label":"b"}'],
    ['a trailing comma', '{"label":"a",}'],
  ])('a property value that is not JSON: %s', (_what, value) => {
    const { config, problems } = withValue(value);
    expect(config.bundles).toEqual([]);
    expect(problems).toEqual([
      {
        object: 'bundle relay.v1.0.0',
        field: 'properties[1].value',
        message: expect.stringMatching(/^the olm\.label value is not JSON: /),
      },
    ]);
  });

  it.each([
    ['arrays', deep(MaxPropertyDepth + 1, '[', ']')],
    ['objects', deep(MaxPropertyDepth + 1, '{"a":', '}')],
    ['arrays and objects', deep((MaxPropertyDepth + 1) / 2 + 1, '[{"a":', '}]')],
    ['100,000 levels', deep(100_000, '[', ']')],
    ['100,000 levels, never closed', '['.repeat(100_000)],
  ])('a property value nested too deep: %s', (_what, value) => {
    const { config, problems } = withValue(value);
    expect(config.bundles).toEqual([]);
    expect(problems).toEqual([
      {
        object: 'bundle relay.v1.0.0',
        field: 'properties[1].value',
        message: `the olm.label value nests more than ${MaxPropertyDepth} levels deep`,
      },
    ]);
  });

  it('nesting up to the limit is read, and brackets inside strings do not count', () => {
    expect(withValue(deep(MaxPropertyDepth, '[', ']')).problems).toEqual([]);
    expect(withValue(JSON.stringify({ label: '['.repeat(10_000) + '\\"{'.repeat(100) })).problems).toEqual(
      [],
    );
  });

  it('a value of a property type OLM reads, of the wrong shape, is refused by the catalog schema', () => {
    const { problems } = withValue('{"packageName":"etcd","versionRange":5}', 'olm.package.required');
    expect(problems).toEqual([
      expect.objectContaining({ object: 'bundle relay.v1.0.0', field: 'properties[1].value.versionRange' }),
    ]);
  });

  it('a manifest past the limit of one manifest in a catalog', () => {
    const big = 'x'.repeat(Math.ceil((CatalogLimits.maxPayloadChars * 3) / 4) + 10);
    const { config, problems } = registryToConfig(
      answers(
        [pkg([['stable', 'relay.v1.0.0']])],
        [bundle('relay.v1.0.0', '1.0.0', { bundlePath: '', object: ['{}', big] })],
      ),
    );
    expect(config.bundles).toEqual([]);
    expect(problems).toEqual([
      {
        object: 'bundle relay.v1.0.0',
        field: 'object[1]',
        message: expect.stringMatching(
          /^the manifest is 12\.0 MiB \(16\.0 MiB as base64\), past the limit of 16\.0 MiB for one manifest in a catalog$/,
        ),
      },
    ]);
  });
});

describe('JSON nesting depth', () => {
  it.each([
    ['1', 0],
    ['"[[["', 0],
    ['[]', 1],
    ['{"a":[1,{"b":[]}]}', 4],
    ['[[1],[2],[[3]]]', 3],
    ['["\\"[", ["\\\\"], "]"]', 2],
    ['[[[', 3],
  ])('%s nests %d deep', (text, depth) => {
    expect(jsonNestingDepth(text, 100)).toBe(depth);
  });

  it('stops counting past the limit', () => {
    expect(jsonNestingDepth('['.repeat(1_000_000), 10)).toBe(11);
  });
});
