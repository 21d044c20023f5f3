/**
 * Image configs (OCI's `application/vnd.oci.image.config.v1+json` and Docker's
 * `container.image.v1`, which share their fields) as far as Bosun reads them: the platform and the
 * labels, which say what an image is to OLM (olm/image-kind.ts). Read from untrusted bytes within
 * a bound, each field checked before it is used.
 */
import type { RegistryClient, ResolvedImage } from './client.js';
import { DefaultPlatform, type Platform } from './manifest.js';
import { OciError, type OciErrorWhere } from './errors.js';
import { formatReference, type ImageReference } from './reference.js';
import { escapeControls } from '../util/terminal.js';

export interface ImageConfig {
  os: string;
  architecture: string;
  labels: Record<string, string>;
}

/** A config is a small JSON document; real ones with long histories stay well below this. */
export const MaxConfigBytes = 4 * 1024 * 1024;

/** Reads config bytes: `config.Labels` must map names to strings (it may be null or absent). */
export function parseImageConfig(bytes: Uint8Array, where: OciErrorWhere): ImageConfig {
  const name = where.image ?? '';
  const bad = (what: string) =>
    new OciError(`${name}: the image config ${where.digest ?? ''} ${what}`, where);
  if (bytes.length > MaxConfigBytes)
    throw bad(`is ${bytes.length} bytes, more than a config may be (${MaxConfigBytes})`);
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(bytes).toString('utf8'));
  } catch (err) {
    throw bad(`is not JSON: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw bad('is not a JSON object');
  const c = doc as Record<string, unknown>;
  const text = (v: unknown, field: string) => {
    if (v === undefined || v === null) return '';
    if (typeof v !== 'string') throw bad(`has ${field} that is not a string`);
    return v;
  };
  const inner = c.config;
  if (inner !== undefined && inner !== null && (typeof inner !== 'object' || Array.isArray(inner)))
    throw bad('has a "config" that is not an object');
  const raw = (inner as Record<string, unknown> | null | undefined)?.Labels;
  const labels: Record<string, string> = {};
  if (raw !== undefined && raw !== null) {
    if (typeof raw !== 'object' || Array.isArray(raw)) throw bad('has config.Labels that is not an object');
    for (const [k, v] of Object.entries(raw)) {
      if (typeof v !== 'string')
        throw bad(`has config.Labels["${escapeControls(k.slice(0, 200))}"] that is not a string`);
      labels[k] = v;
    }
  }
  return { os: text(c.os, 'os'), architecture: text(c.architecture, 'architecture'), labels };
}

/** The config of a resolved image, fetched by its digest and verified. */
export async function fetchImageConfig(client: RegistryClient, image: ResolvedImage): Promise<ImageConfig> {
  const bytes = await client.blobBytes(image.ref, image.manifest.config, MaxConfigBytes);
  return parseImageConfig(bytes, {
    registry: image.ref.registry,
    repository: image.ref.repository,
    image: formatReference(image.ref),
    digest: image.manifest.config.digest,
  });
}

export interface InspectedImage {
  image: ResolvedImage;
  config: ImageConfig;
}

/** The platform's image `ref` names and its config: what it is, before any layer is fetched. */
export async function inspectImage(
  client: RegistryClient,
  ref: ImageReference,
  platform: Platform = DefaultPlatform,
): Promise<InspectedImage> {
  const image = await client.getImage(ref, platform);
  return { image, config: await fetchImageConfig(client, image) };
}
