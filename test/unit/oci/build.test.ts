import { Readable } from 'node:stream';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { buildBundleImage, bundleFromImageFiles } from '../../../src/bundle/image.js';
import { readBundle, readBundleFiles } from '../../../src/bundle/read.js';
import { buildCatalogImage, configsFolder, readCatalogFiles } from '../../../src/catalog/image.js';
import { CatalogImageLabel, ImageKind, imageKindOf, noKind, wrongKind } from '../../../src/olm/image-kind.js';
import { buildImage } from '../../../src/oci/build.js';
import { sha256Digest } from '../../../src/oci/digest.js';
import { readLayers } from '../../../src/oci/extract.js';
import { parseImageConfig } from '../../../src/oci/image-config.js';
import { parseManifest } from '../../../src/oci/manifest.js';
import { MediaType } from '../../../src/oci/media-types.js';

const root = join(import.meta.dirname, '../../..');
const sampleBundle = join(root, 'bundles/bosun-sample/0.1.0');
const sampleCatalog = join(root, 'catalogs/bosun-samples');

/** The files of a built image's layers, read back by the extraction pulls use. */
async function contentOf(image: ReturnType<typeof buildImage>) {
  return readLayers(
    image.layers.map((l) => ({
      digest: l.descriptor.digest,
      mediaType: l.descriptor.mediaType,
      open: async () => Readable.from([l.data]),
    })),
    { image: 'built' },
  );
}

async function bundleFiles() {
  const files = await readBundleFiles(sampleBundle);
  const read = await readBundle(sampleBundle);
  if (!files.ok || !read.ok) throw new Error('the sample bundle does not read');
  return { files: files.value, annotations: read.value.annotations };
}

describe('images built from files', () => {
  it('the same files, labels and platform give the same bytes and digest, whatever the order they were given in', () => {
    const files = new Map([
      ['b/two.yaml', Buffer.from('two')],
      ['a/one.yaml', Buffer.from('one')],
    ]);
    const a = buildImage({ files, labels: { x: '1', y: '2' }, createdBy: 'test' });
    const b = buildImage({
      files: new Map([...files].reverse()),
      labels: { y: '2', x: '1' },
      createdBy: 'test',
    });
    expect(b.manifest.data.equals(a.manifest.data)).toBe(true);
    expect(b.layers[0]!.data.equals(a.layers[0]!.data)).toBe(true);
    expect(b.manifest.descriptor.digest).toBe(a.manifest.descriptor.digest);
  });

  it('any change to a file, a label or the platform changes the digest', () => {
    const files = new Map([['a/one.yaml', Buffer.from('one')]]);
    const base = buildImage({ files, labels: { x: '1' }, createdBy: 'test' }).manifest.descriptor.digest;
    const variants = [
      buildImage({
        files: new Map([['a/one.yaml', Buffer.from('One')]]),
        labels: { x: '1' },
        createdBy: 'test',
      }),
      buildImage({
        files: new Map([['a/One.yaml', Buffer.from('one')]]),
        labels: { x: '1' },
        createdBy: 'test',
      }),
      buildImage({ files, labels: { x: '2' }, createdBy: 'test' }),
      buildImage({
        files,
        labels: { x: '1' },
        createdBy: 'test',
        platform: { os: 'linux', architecture: 'arm64' },
      }),
    ];
    for (const v of variants) expect(v.manifest.descriptor.digest).not.toBe(base);
  });

  it('the manifest, config and layer are well-formed and name each other by digest', () => {
    const image = buildImage({
      files: new Map([['configs/p/catalog.json', Buffer.from('{}')]]),
      labels: { l: 'v' },
      createdBy: 'test',
    });
    const manifest = parseManifest(image.manifest.data, MediaType.OciManifest, { image: 'built' });
    if (manifest.kind !== 'manifest') throw new Error('not a manifest');
    expect(manifest.config).toEqual(image.config.descriptor);
    expect(manifest.layers).toEqual([image.layers[0]!.descriptor]);
    expect(image.layers[0]!.descriptor.mediaType).toBe(MediaType.OciLayerGzip);
    expect(sha256Digest(image.layers[0]!.data)).toBe(image.layers[0]!.descriptor.digest);
    expect(image.diffIds).toEqual([sha256Digest(gunzipSync(image.layers[0]!.data))]);
    const config = JSON.parse(image.config.data.toString()) as Record<string, unknown>;
    expect(config).toMatchObject({
      os: 'linux',
      architecture: 'amd64',
      rootfs: { type: 'layers', diff_ids: image.diffIds },
    });
    // No time anywhere: a timestamp would make every build a new digest.
    expect(image.config.data.toString()).not.toMatch(/created"|\d{4}-\d\d-\d\dT/);
    expect(parseImageConfig(image.config.data, { image: 'built' }).labels).toEqual({ l: 'v' });
  });

  it('paths longer than a ustar header holds are written with a PAX header and read back whole', async () => {
    const long = `manifests/${'d'.repeat(120)}/${'f'.repeat(120)}.yaml`;
    const deep = `configs/${'x'.repeat(200)}.json`;
    const files = new Map([
      [long, Buffer.from('long')],
      [deep, Buffer.from('deep')],
    ]);
    const read = await contentOf(buildImage({ files, labels: {}, createdBy: 'test' }));
    expect(read.files.get(long)?.toString()).toBe('long');
    expect(read.files.get(deep)?.toString()).toBe('deep');
  });
});

describe('bundle images', () => {
  it('hold manifests/ and metadata/ byte for byte, labelled with the annotations, and read back as the same bundle', async () => {
    const { files, annotations } = await bundleFiles();
    const image = buildBundleImage(files, annotations);
    const labels = parseImageConfig(image.config.data, { image: 'built' }).labels;
    expect(labels).toEqual(annotations);
    expect(imageKindOf(labels)).toBe(ImageKind.Bundle);
    const content = await contentOf(image);
    expect(new Map([...content.files].sort())).toEqual(new Map([...files].sort()));
    const read = bundleFromImageFiles(content, labels, 'img');
    if (!read.ok) throw new Error(JSON.stringify(read.errors));
    expect(read.value.bundle.annotations).toEqual(annotations);
    expect(read.value.bundle.manifests.map((m) => m.object.kind).sort()).toContain('ClusterServiceVersion');
    expect(buildBundleImage(files, annotations).manifest.descriptor.digest).toBe(
      image.manifest.descriptor.digest,
    );
  });

  it('a symlink in manifests/ or metadata/ is refused, naming the image and the path', () => {
    for (const path of ['manifests/csv.yaml', 'metadata/annotations.yaml']) {
      const read = bundleFromImageFiles(
        { files: new Map(), symlinks: new Map([[path, '/etc/passwd']]), dirs: [] },
        {},
        'reg/x@sha256:1',
      );
      expect(read.ok).toBe(false);
      if (!read.ok) expect(read.errors[0]!.file).toBe(`reg/x@sha256:1:${path}`);
    }
  });

  it('a label contradicting metadata/annotations.yaml is a warning naming the annotation; the file wins', async () => {
    const { files, annotations } = await bundleFiles();
    const content = await contentOf(buildBundleImage(files, annotations));
    const pkgKey = 'operators.operatorframework.io.bundle.package.v1';
    const read = bundleFromImageFiles(content, { ...annotations, [pkgKey]: 'other' }, 'img');
    if (!read.ok) throw new Error(JSON.stringify(read.errors));
    expect(read.value.bundle.annotations[pkgKey]).toBe(annotations[pkgKey]);
    expect(read.value.bundle.warnings?.map((w) => w.field)).toContain(`annotations.${pkgKey}`);
  });
});

describe('catalog images', () => {
  it('hold the catalog files under configs/, labelled with the configs folder', async () => {
    const files = await readCatalogFiles(sampleCatalog);
    if (!files.ok) throw new Error(JSON.stringify(files.errors));
    const image = buildCatalogImage(files.value);
    const labels = parseImageConfig(image.config.data, { image: 'built' }).labels;
    expect(labels).toEqual({ [CatalogImageLabel.Configs]: '/configs' });
    expect(imageKindOf(labels)).toBe(ImageKind.Catalog);
    const content = await contentOf(image);
    expect(new Map([...content.files].sort())).toEqual(
      new Map([...files.value].map(([p, d]) => [`configs/${p}`, d] as const).sort()),
    );
  });

  it.each([
    ['/configs', 'configs'],
    ['configs', 'configs'],
    ['/srv/catalog/', 'srv/catalog'],
    ['/', ''],
    ['//configs', 'configs'],
  ])('the configs label %j names the folder %j of the image', (label, folder) => {
    expect(configsFolder(label)).toEqual({ ok: true, path: folder });
  });

  it.each(['/../etc', '../configs', '/configs/../../x', 'a\\b', 'con\0figs'])(
    'the configs label %j, which leads out of the image or is ambiguous, is refused',
    (label) => {
      expect(configsFolder(label).ok).toBe(false);
    },
  );
});

describe('image kinds, in opm`s order', () => {
  it.each([
    [{}, ImageKind.Unknown],
    [{ 'operators.operatorframework.io.bundle.package.v1': 'p' }, ImageKind.Bundle],
    [{ [CatalogImageLabel.Configs]: '/configs' }, ImageKind.Catalog],
    [
      { [CatalogImageLabel.Configs]: '/configs', 'operators.operatorframework.io.bundle.package.v1': 'p' },
      ImageKind.Catalog,
    ],
    [
      { [CatalogImageLabel.Database]: '/db', [CatalogImageLabel.Configs]: '/configs' },
      ImageKind.SqliteCatalog,
    ],
  ])('labels %j make a %s image', (labels, kind) => {
    expect(imageKindOf(labels)).toBe(kind);
  });
});

describe('labels in messages are the image author`s text, made inert', () => {
  const payloads = [
    'x\nerror: forged line',
    'x\r\x1b[2Kerror: overwritten',
    '\x1b]8;;http://evil.example\x07link\x1b]8;;\x07',
    '\x9b31mred',
    'abc\u202egnp.exe',
    '\x1b[?1049h',
    'long'.repeat(10_000),
  ];
  // Control characters (C0, DEL, C1) and bidirectional overrides, as they would reach a terminal.
  // eslint-disable-next-line no-control-regex -- the characters under test
  const raw = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;
  it.each(payloads.map((p) => [JSON.stringify(p).slice(0, 60), p]))(
    'a label %s in a key or value never reaches the message raw, and stays short',
    (_, payload) => {
      const messages = [
        wrongKind(ImageKind.Bundle, { [CatalogImageLabel.Configs]: payload }),
        wrongKind(ImageKind.Catalog, { 'operators.operatorframework.io.bundle.package.v1': payload }),
        wrongKind(ImageKind.Catalog, { [payload]: payload }),
        noKind({ [payload]: payload, other: payload }),
      ];
      for (const m of messages) {
        expect(m).not.toMatch(raw);
        expect(m.length).toBeLessThan(1000);
      }
      let thrown = '';
      try {
        parseImageConfig(Buffer.from(JSON.stringify({ config: { Labels: { [payload]: 1 } } })), {
          image: 'x',
        });
      } catch (err) {
        thrown = (err as Error).message;
      }
      expect(thrown).toMatch(/is not a string/);
      expect(thrown).not.toMatch(raw);
    },
  );
});

describe('image configs', () => {
  it.each([
    ['not JSON', '{', /is not JSON/],
    ['not an object', '[]', /is not a JSON object/],
    ['config not an object', '{"config":"x"}', /"config" that is not an object/],
    ['labels not an object', '{"config":{"Labels":[]}}', /config.Labels that is not an object/],
    ['a label not a string', '{"config":{"Labels":{"a":1}}}', /config.Labels\["a"\] that is not a string/],
    ['os not a string', '{"os":3}', /os that is not a string/],
  ])('a config that is %s is refused, naming the image and the field', (_, text, why) => {
    expect(() => parseImageConfig(Buffer.from(text), { image: 'reg/x:1', digest: 'sha256:c' })).toThrow(why);
    expect(() => parseImageConfig(Buffer.from(text), { image: 'reg/x:1', digest: 'sha256:c' })).toThrow(
      /^reg\/x:1: /,
    );
  });

  it('null or missing labels are no labels', () => {
    expect(parseImageConfig(Buffer.from('{"config":{"Labels":null}}'), { image: 'x' }).labels).toEqual({});
    expect(parseImageConfig(Buffer.from('{}'), { image: 'x' }).labels).toEqual({});
  });
});
