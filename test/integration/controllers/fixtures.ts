/**
 * A small file-based catalog for the controller tests: `foo` (two versions on `stable`, provides
 * an API), `bar` (needs package foo), `baz` (needs a package no catalog has), `qux` (stands alone).
 */
const bundle = (pkg: string, version: string, extra: object[] = []) => ({
  schema: 'olm.bundle',
  name: `${pkg}.v${version}`,
  package: pkg,
  image: `example.com/bosun-test/${pkg}:v${version}`,
  properties: [{ type: 'olm.package', value: { packageName: pkg, version } }, ...extra],
});

export const testCatalogDocs: object[] = [
  { schema: 'olm.package', name: 'foo', defaultChannel: 'stable' },
  {
    schema: 'olm.channel',
    package: 'foo',
    name: 'stable',
    entries: [{ name: 'foo.v0.1.0' }, { name: 'foo.v0.2.0', replaces: 'foo.v0.1.0' }],
  },
  bundle('foo', '0.1.0', [
    { type: 'olm.gvk', value: { group: 'foo.example.com', version: 'v1', kind: 'Foo' } },
  ]),
  bundle('foo', '0.2.0', [
    { type: 'olm.gvk', value: { group: 'foo.example.com', version: 'v1', kind: 'Foo' } },
  ]),
  { schema: 'olm.package', name: 'bar', defaultChannel: 'stable' },
  { schema: 'olm.channel', package: 'bar', name: 'stable', entries: [{ name: 'bar.v1.0.0' }] },
  bundle('bar', '1.0.0', [
    { type: 'olm.package.required', value: { packageName: 'foo', versionRange: '>=0.1.0' } },
  ]),
  { schema: 'olm.package', name: 'baz', defaultChannel: 'stable' },
  { schema: 'olm.channel', package: 'baz', name: 'stable', entries: [{ name: 'baz.v1.0.0' }] },
  bundle('baz', '1.0.0', [
    { type: 'olm.package.required', value: { packageName: 'nothere', versionRange: '>=1.0.0' } },
  ]),
  { schema: 'olm.package', name: 'qux', defaultChannel: 'stable' },
  { schema: 'olm.channel', package: 'qux', name: 'stable', entries: [{ name: 'qux.v1.0.0' }] },
  bundle('qux', '1.0.0'),
];

/** The catalog as a JSON stream (one document per line, like catalogd's /api/v1/all). */
export const testCatalogJson = testCatalogDocs.map((d) => JSON.stringify(d)).join('\n');
