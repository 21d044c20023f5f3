import { describe, expect, it } from 'vitest';
import { OciError, PlatformMissingError } from '../../../src/oci/errors.js';
import {
  type Descriptor,
  type ImageIndex,
  type Platform,
  MaxManifestBytes,
  parseManifest,
  parsePlatform,
  selectPlatform,
} from '../../../src/oci/manifest.js';
import { MediaType } from '../../../src/oci/media-types.js';
import { parseReference, formatReference, apiHost } from '../../../src/oci/reference.js';

const d = (n: number) => `sha256:${n.toString(16).padStart(64, '0')}`;
const where = { image: 'quay.io/org/op:v1', digest: d(99) };
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

describe('image references for pulling', () => {
  it.each([
    [
      'busybox',
      { registry: 'docker.io', repository: 'library/busybox', tag: 'latest' },
      'registry-1.docker.io',
    ],
    ['quay.io/org/op:v1', { registry: 'quay.io', repository: 'org/op', tag: 'v1' }, 'quay.io'],
    [
      `localhost:5000/op@${d(1)}`,
      { registry: 'localhost:5000', repository: 'op', digest: d(1) },
      'localhost:5000',
    ],
    [
      `127.0.0.1:5000/a/b:t@${d(2)}`,
      { registry: '127.0.0.1:5000', repository: 'a/b', tag: 't', digest: d(2) },
      '127.0.0.1:5000',
    ],
  ])('%s', (text, expected, host) => {
    const ref = parseReference(text);
    expect(ref).toEqual(expected);
    expect(apiHost(ref.registry)).toBe(host);
    expect(parseReference(formatReference(ref))).toEqual(ref);
  });

  it('refuses a reference opm would refuse, naming it', () => {
    expect(() => parseReference('quay.io/Org/op')).toThrow(
      'image reference "quay.io/Org/op": invalid reference format: repository name (Org/op) must be lowercase',
    );
  });
});

describe('manifests read from untrusted bytes', () => {
  const config = { mediaType: MediaType.OciConfig, digest: d(1), size: 10 };
  const layer = { mediaType: MediaType.OciLayerGzip, digest: d(2), size: 20 };

  it('reads OCI and Docker manifests and indexes, the document type over the header', () => {
    const m = parseManifest(
      json({ schemaVersion: 2, mediaType: MediaType.DockerManifest, config, layers: [layer] }),
      'text/plain',
      where,
    );
    expect(m).toEqual({
      kind: 'manifest',
      schemaVersion: 2,
      mediaType: MediaType.DockerManifest,
      config,
      layers: [layer],
    });
    // OCI lets mediaType be left out: then the header says, or the shape does.
    expect(
      parseManifest(json({ schemaVersion: 2, config, layers: [] }), MediaType.OciManifest, where).kind,
    ).toBe('manifest');
    const index = parseManifest(
      json({
        schemaVersion: 2,
        manifests: [
          { ...layer, mediaType: MediaType.OciManifest, platform: { os: 'linux', architecture: 'amd64' } },
        ],
      }),
      undefined,
      where,
    );
    expect(index.kind).toBe('index');
  });

  it.each([
    ['not JSON', Buffer.from('{'), /is not JSON/],
    ['a list', json([]), /is not a JSON object/],
    ['schema 1', json({ schemaVersion: 1, name: 'x' }), /Docker schema 1 manifest/],
    [
      'schema 1 by type',
      json({ schemaVersion: 2, mediaType: MediaType.DockerSchema1Signed }),
      /Docker schema 1 manifest/,
    ],
    ['schema 3', json({ schemaVersion: 3, config, layers: [] }), /schemaVersion 3, not 2/],
    [
      'another type',
      json({ schemaVersion: 2, mediaType: 'text/html', config, layers: [] }),
      /media type "text\/html"/,
    ],
    ['no layers', json({ schemaVersion: 2, mediaType: MediaType.OciManifest, config }), /no "layers" list/],
    [
      'a bad digest',
      json({ schemaVersion: 2, config: { ...config, digest: 'sha256:../../etc' }, layers: [] }),
      /bad config.digest/,
    ],
    [
      'an md5 digest',
      json({ schemaVersion: 2, config, layers: [{ ...layer, digest: `md5:${'0'.repeat(32)}` }] }),
      /layers\[0\].digest: digest algorithm "md5"/,
    ],
    [
      'a negative size',
      json({ schemaVersion: 2, config, layers: [{ ...layer, size: -1 }] }),
      /layers\[0\].size/,
    ],
    [
      'a fractional size',
      json({ schemaVersion: 2, config: { ...config, size: 1.5 }, layers: [] }),
      /config.size/,
    ],
    [
      'a size as text',
      json({ schemaVersion: 2, config: { ...config, size: '10' }, layers: [] }),
      /config.size/,
    ],
    [
      'no mediaType in a descriptor',
      json({ schemaVersion: 2, config: { digest: d(1), size: 1 }, layers: [] }),
      /config.mediaType/,
    ],
    [
      'an index without platform os',
      json({
        schemaVersion: 2,
        mediaType: MediaType.OciIndex,
        manifests: [{ ...layer, platform: { architecture: 'amd64' } }],
      }),
      /manifests\[0\].platform/,
    ],
    [
      'annotations that are not strings',
      json({ schemaVersion: 2, config, layers: [], annotations: { a: 1 } }),
      /annotations.a/,
    ],
    ['too large', Buffer.alloc(MaxManifestBytes + 1, 32), /more than a manifest may be/],
  ])('refuses %s, naming the image and digest', (_name, bytes, message) => {
    const err = (() => {
      try {
        parseManifest(bytes, undefined, where);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(OciError);
    expect((err as Error).message).toMatch(/^quay\.io\/org\/op:v1: the manifest sha256:0+63 /);
    expect((err as Error).message).toMatch(message);
  });
});

describe('choosing a platform from an index', () => {
  const entry = (n: number, platform?: Platform, extra: Partial<Descriptor> = {}): Descriptor => ({
    mediaType: MediaType.OciManifest,
    digest: d(n),
    size: 1,
    ...(platform && { platform }),
    ...extra,
  });
  const index: ImageIndex = {
    kind: 'index',
    schemaVersion: 2,
    mediaType: MediaType.OciIndex,
    manifests: [
      entry(
        1,
        { os: 'unknown', architecture: 'unknown' },
        { annotations: { 'vnd.docker.reference.type': 'attestation-manifest' } },
      ),
      entry(2, { os: 'linux', architecture: 'arm64' }),
      entry(3, { os: 'linux', architecture: 'amd64' }),
      entry(4, { os: 'linux', architecture: 'arm64', variant: 'v8' }),
      entry(5, { os: 'linux', architecture: 'arm', variant: 'v6' }),
      entry(6, { os: 'windows', architecture: 'amd64', 'os.version': '10.0.17763' }),
    ],
  };
  it.each([
    ['linux/amd64', 3],
    ['linux/arm64', 2],
    ['linux/arm64/v8', 4],
    ['linux/arm/v6', 5],
    ['windows/amd64', 6],
  ])('%s', (platform, n) => {
    expect(selectPlatform(index, parsePlatform(platform), where).digest).toBe(d(n));
  });

  it('reads an implied variant (arm64 is v8) when no entry states it', () => {
    const only = { ...index, manifests: [entry(2, { os: 'linux', architecture: 'arm64' })] };
    expect(selectPlatform(only, parsePlatform('linux/arm64/v8'), where).digest).toBe(d(2));
  });

  it('names what the index has when the platform is missing, never choosing an attestation', () => {
    expect(() => selectPlatform(index, parsePlatform('linux/s390x'), where)).toThrow(
      `quay.io/org/op:v1: the index ${d(99)} has no linux/s390x image (ImagePlatformMissing); it has images for linux/arm64, linux/amd64, linux/arm64/v8, linux/arm/v6, windows/amd64`,
    );
    expect(() => selectPlatform(index, parsePlatform('unknown/unknown'), where)).toThrow(
      /has no unknown\/unknown image \(ImagePlatformMissing\)/,
    );
  });

  // Whatever the index holds, a missing platform is its own error with its own reason, never
  // taken for a registry that failed: other architectures, amd64 of another OS, a Docker list,
  // nothing but attestations, nothing with a platform at all.
  const amd64 = parsePlatform('linux/amd64');
  it.each([
    [
      'other architectures',
      [entry(2, { os: 'linux', architecture: 'arm64' }), entry(7, { os: 'linux', architecture: 's390x' })],
      ['linux/arm64', 'linux/s390x'],
    ],
    ['amd64 of another OS', [entry(6, { os: 'windows', architecture: 'amd64' })], ['windows/amd64']],
    [
      'a Docker manifest list',
      [entry(2, { os: 'linux', architecture: 'arm64' }, { mediaType: MediaType.DockerManifest })],
      ['linux/arm64'],
    ],
    ['attestations only', [index.manifests[0]!], []],
    ['no platforms', [entry(8)], []],
  ] as const)('an index with %s has no linux/amd64 image, and says what it has', (_what, manifests, has) => {
    let thrown: unknown;
    try {
      selectPlatform({ ...index, manifests: [...manifests] }, amd64, where);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(PlatformMissingError);
    const err = thrown as PlatformMissingError;
    expect(err.platforms).toEqual(has);
    expect(err.message).toContain(`the index ${d(99)} has no linux/amd64 image (ImagePlatformMissing); `);
    expect(err.message).toContain(
      has.length ? `it has images for ${has.join(', ')}` : 'none of its images names a platform',
    );
    expect(err.message).not.toMatch(/server/i);
  });

  it.each(['linux', 'linux/amd64/v1/x', 'linux/$(x)', ''])('refuses the platform %j', (text) => {
    expect(() => parsePlatform(text)).toThrow(/is not os\/architecture\[\/variant\]/);
  });
});
