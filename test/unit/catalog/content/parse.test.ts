import { describe, expect, it } from 'vitest';
import { digestOf } from '../../../../src/catalog/content/digest.js';
import { parseCatalogFiles } from '../../../../src/catalog/content/parse.js';

const pkg = { schema: 'olm.package', name: 'foo', defaultChannel: 'stable' };
const channel = { schema: 'olm.channel', package: 'foo', name: 'stable', entries: [{ name: 'foo.v1.0.0' }] };
const bundle = {
  schema: 'olm.bundle',
  package: 'foo',
  name: 'foo.v1.0.0',
  image: 'example.com/foo:v1',
  properties: [{ type: 'olm.package', value: { packageName: 'foo', version: '1.0.0' } }],
};
const json = [pkg, channel, bundle].map((d) => JSON.stringify(d)).join('\n');

describe('parseCatalogFiles', () => {
  it('reads documents split over several files, YAML or JSON', () => {
    const parsed = parseCatalogFiles(
      [
        { name: 'a.json', text: JSON.stringify(pkg) },
        {
          name: 'b.yaml',
          text: `schema: olm.channel\npackage: foo\nname: stable\nentries:\n  - name: foo.v1.0.0\n`,
        },
        { name: 'c.json', text: JSON.stringify(bundle) },
      ],
      'ConfigMap ns/cat',
    );
    expect(parsed.ok).toBe(true);
    if (parsed.ok) expect(parsed.config.bundles.map((b) => b.name)).toEqual(['foo.v1.0.0']);
  });

  it('names the source and the problem when the catalog is invalid', () => {
    const parsed = parseCatalogFiles(
      [{ name: 'x', text: json.replace('"defaultChannel":"stable"', '"defaultChannel":"beta"') }],
      'ConfigMap ns/cat',
    );
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.message).toMatch(/^ConfigMap ns\/cat is not a valid file-based catalog: /);
      expect(parsed.message).toContain('beta');
    }
  });

  it('reports text that is not FBC at all', () => {
    const parsed = parseCatalogFiles([{ name: 'x', text: '<html>502 Bad Gateway</html>' }], 'http://example');
    expect(parsed.ok).toBe(false);
  });

  it('has a digest that depends on content, not on file order', () => {
    const a = { name: 'a', text: 'one' };
    const b = { name: 'b', text: 'two' };
    expect(digestOf([a, b])).toBe(digestOf([b, a]));
    expect(digestOf([a, b])).not.toBe(digestOf([a, { name: 'b', text: 'three' }]));
  });
});
