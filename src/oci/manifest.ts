/**
 * Image manifests and indexes (OCI's, and Docker's v2 schema 2 manifest and manifest list, which
 * have the same shape), read from untrusted bytes: each field a later step relies on is checked
 * here, so a manifest that passes has digests that can be verified, sizes that are whole numbers
 * and media types that are strings. And the choice of one platform's image from an index.
 */
import { digestError } from './digest.js';
import { OciError, type OciErrorWhere, PlatformMissingError } from './errors.js';
import { MediaType, imageManifestTypes, indexTypes } from './media-types.js';

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
  'os.version'?: string;
}

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: Platform;
  annotations?: Record<string, string>;
  urls?: string[];
  artifactType?: string;
}

export interface ImageManifest {
  kind: 'manifest';
  schemaVersion: 2;
  mediaType: string;
  config: Descriptor;
  layers: Descriptor[];
  annotations?: Record<string, string>;
}

export interface ImageIndex {
  kind: 'index';
  schemaVersion: 2;
  mediaType: string;
  manifests: Descriptor[];
  annotations?: Record<string, string>;
}

export type Manifest = ImageManifest | ImageIndex;

/** A manifest is a small JSON document; anything larger is not one (distribution itself stops at 4 MiB). */
export const MaxManifestBytes = 4 * 1024 * 1024;

/**
 * Reads manifest bytes. The media type is the document's own `mediaType` when it has one (the
 * content is what the digest covers), else the `Content-Type` the registry sent.
 */
export function parseManifest(
  bytes: Uint8Array,
  contentType: string | undefined,
  where: OciErrorWhere,
): Manifest {
  const name = where.image ?? '';
  const bad = (what: string) =>
    new OciError(`${name}: the manifest ${where.digest ?? ''} ${what}`.replace('  ', ' '), where);
  if (bytes.length > MaxManifestBytes)
    throw bad(`is ${bytes.length} bytes, more than a manifest may be (${MaxManifestBytes})`);
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw bad(`is not JSON: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw bad('is not a JSON object');
  const m = doc as Record<string, unknown>;
  const headerType = contentType?.split(';')[0]!.trim();
  const mediaType = typeof m.mediaType === 'string' ? m.mediaType : headerType;
  if (
    mediaType === MediaType.DockerSchema1 ||
    mediaType === MediaType.DockerSchema1Signed ||
    m.schemaVersion === 1
  )
    throw bad(
      'is a Docker schema 1 manifest, which Bosun does not read: push the image again with a current client',
    );
  if (m.schemaVersion !== 2) throw bad(`has schemaVersion ${JSON.stringify(m.schemaVersion)}, not 2`);
  if (m.mediaType !== undefined && typeof m.mediaType !== 'string')
    throw bad('has a mediaType that is not a string');
  const annotations = stringMap(m.annotations, 'annotations', bad);
  // An index is known by its type, or (the OCI spec lets mediaType be left out) by having
  // `manifests` and no `layers`.
  const isIndex =
    mediaType !== undefined
      ? indexTypes.includes(mediaType)
      : Array.isArray(m.manifests) && m.layers === undefined;
  if (isIndex) {
    if (!Array.isArray(m.manifests)) throw bad('is an index without a "manifests" list');
    return {
      kind: 'index',
      schemaVersion: 2,
      mediaType: mediaType ?? MediaType.OciIndex,
      manifests: m.manifests.map((d, i) => descriptor(d, `manifests[${i}]`, bad)),
      ...(annotations && { annotations }),
    };
  }
  if (mediaType !== undefined && !imageManifestTypes.includes(mediaType))
    throw bad(
      `has the media type "${mediaType.slice(0, 200)}", which is neither an image manifest nor an index`,
    );
  if (!Array.isArray(m.layers)) throw bad('has no "layers" list');
  return {
    kind: 'manifest',
    schemaVersion: 2,
    mediaType: mediaType ?? MediaType.OciManifest,
    config: descriptor(m.config, 'config', bad),
    layers: m.layers.map((d, i) => descriptor(d, `layers[${i}]`, bad)),
    ...(annotations && { annotations }),
  };
}

function descriptor(value: unknown, field: string, bad: (what: string) => OciError): Descriptor {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw bad(`has no descriptor at ${field}`);
  const d = value as Record<string, unknown>;
  if (typeof d.mediaType !== 'string') throw bad(`has no mediaType at ${field}.mediaType`);
  if (typeof d.digest !== 'string') throw bad(`has no digest at ${field}.digest`);
  const wrong = digestError(d.digest);
  if (wrong) throw bad(`has a bad ${field}.digest: ${wrong}`);
  if (typeof d.size !== 'number' || !Number.isSafeInteger(d.size) || d.size < 0)
    throw bad(`has no whole, non-negative size at ${field}.size`);
  const out: Descriptor = { mediaType: d.mediaType, digest: d.digest, size: d.size };
  if (d.platform !== undefined) out.platform = platform(d.platform, `${field}.platform`, bad);
  const annotations = stringMap(d.annotations, `${field}.annotations`, bad);
  if (annotations) out.annotations = annotations;
  if (typeof d.artifactType === 'string') out.artifactType = d.artifactType;
  if (Array.isArray(d.urls)) out.urls = d.urls.filter((u): u is string => typeof u === 'string');
  return out;
}

function platform(value: unknown, field: string, bad: (what: string) => OciError): Platform {
  if (typeof value !== 'object' || value === null) throw bad(`has no object at ${field}`);
  const p = value as Record<string, unknown>;
  if (typeof p.os !== 'string' || typeof p.architecture !== 'string')
    throw bad(`has no os and architecture at ${field}`);
  return {
    os: p.os,
    architecture: p.architecture,
    ...(typeof p.variant === 'string' && { variant: p.variant }),
    ...(typeof p['os.version'] === 'string' && { 'os.version': p['os.version'] }),
  };
}

function stringMap(
  value: unknown,
  field: string,
  bad: (what: string) => OciError,
): Record<string, string> | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) throw bad(`has no object at ${field}`);
  for (const [k, v] of Object.entries(value))
    if (typeof v !== 'string') throw bad(`has a value that is not a string at ${field}.${k}`);
  return value as Record<string, string>;
}

// ---- platforms ----

export const DefaultPlatform: Platform = { os: 'linux', architecture: 'amd64' };

/** `os/arch[/variant]`, as docker and crane take `--platform`. */
export function parsePlatform(text: string): Platform {
  const parts = text.split('/');
  if (parts.length < 2 || parts.length > 3 || parts.some((p) => !/^[a-z0-9._-]+$/i.test(p)))
    throw new OciError(
      `platform "${text}" is not os/architecture[/variant], such as linux/amd64 or linux/arm64/v8`,
    );
  return { os: parts[0]!, architecture: parts[1]!, ...(parts[2] !== undefined && { variant: parts[2] }) };
}

export function formatPlatform(p: Platform): string {
  return [p.os, p.architecture, p.variant].filter(Boolean).join('/');
}

// Variants a platform has when its descriptor leaves them out, as containerd's matcher reads them.
const defaultVariant: Record<string, string> = { arm64: 'v8', arm: 'v7' };

function matches(want: Platform, have: Platform): boolean {
  if (want.os !== have.os || want.architecture !== have.architecture) return false;
  if (want.variant === undefined) return true;
  return want.variant === (have.variant ?? defaultVariant[have.architecture]);
}

/**
 * The descriptor of `want`'s image in an index: the first entry that matches it, preferring one
 * whose variant is stated over one where it is implied. Attestations and other artifacts kept in
 * an index (`unknown/unknown`, or a reference-type annotation) are never chosen.
 */
export function selectPlatform(index: ImageIndex, want: Platform, where: OciErrorWhere): Descriptor {
  const images = index.manifests.filter(
    (d) =>
      (imageManifestTypes.includes(d.mediaType) || indexTypes.includes(d.mediaType)) &&
      d.annotations?.['vnd.docker.reference.type'] === undefined,
  );
  const candidates = images.filter((d) => d.platform !== undefined && matches(want, d.platform));
  const exact = candidates.find(
    (d) => d.platform!.variant !== undefined && d.platform!.variant === want.variant,
  );
  const chosen = exact ?? candidates[0];
  if (chosen) return chosen;
  const available = [
    ...new Set(
      images.filter((d) => d.platform && d.platform.os !== 'unknown').map((d) => formatPlatform(d.platform!)),
    ),
  ];
  const image = where.image ? `${where.image}: ` : '';
  const which = where.digest ? `the index ${where.digest}` : 'the index';
  throw new PlatformMissingError(
    `${image}${which} has no ${formatPlatform(want)} image (${PlatformMissingError.reason}); ${
      available.length > 0
        ? `it has images for ${available.join(', ')}`
        : 'none of its images names a platform'
    }`,
    where,
    available,
  );
}
