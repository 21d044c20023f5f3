/**
 * Images made in the tests: tar layers with any entry a hostile image could hold (paths with
 * `..`, absolute paths, links out, devices, sizes that lie), compressed as registries serve them,
 * and the configs, manifests and indexes around them.
 */
import { createHash } from 'node:crypto';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import type { Descriptor, Platform } from '../../src/oci/manifest.js';
import { MediaType } from '../../src/oci/media-types.js';

export interface TarEntry {
  path: string;
  type?: 'file' | 'dir' | 'symlink' | 'link' | 'char' | 'block' | 'fifo';
  data?: Buffer | string;
  linkpath?: string;
  mode?: number;
}

const BLOCK = 512;
const typeFlag = { file: '0', link: '1', symlink: '2', char: '3', block: '4', dir: '5', fifo: '6' } as const;

function octal(h: Buffer, offset: number, length: number, value: number) {
  h.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'latin1');
}

function header(name: string, type: string, size: number, linkname = '', mode = 0o644): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  octal(h, 100, 8, mode);
  octal(h, 108, 8, 0);
  octal(h, 116, 8, 0);
  octal(h, 124, 12, size);
  octal(h, 136, 12, 946_684_800);
  h.fill(' ', 148, 156);
  h.write(type, 156, 1, 'latin1');
  h.write(linkname, 157, 100, 'utf8');
  h.write('ustar\0', 257, 6, 'latin1');
  h.write('00', 263, 2, 'latin1');
  let sum = 0;
  for (const b of h) sum += b;
  octal(h, 148, 7, sum);
  return h;
}

const pad = (n: number) => Buffer.alloc((BLOCK - (n % BLOCK)) % BLOCK);

/** A PAX extended header carrying long names, as GNU tar and Go write them. */
function pax(records: Record<string, string>): Buffer[] {
  let body = '';
  for (const [k, v] of Object.entries(records)) {
    const rest = ` ${k}=${v}\n`;
    let len = Buffer.byteLength(rest) + 1;
    while (String(len).length + Buffer.byteLength(rest) !== len)
      len = String(len).length + Buffer.byteLength(rest);
    body += `${len}${rest}`;
  }
  const data = Buffer.from(body);
  return [header('PaxHeader', 'x', data.length), data, pad(data.length)];
}

/** An uncompressed tar of `entries`, written exactly as given (nothing normalised or refused). */
export function tarOf(entries: TarEntry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const type = e.type ?? 'file';
    const data = type === 'file' ? Buffer.from(e.data ?? '') : Buffer.alloc(0);
    const long: Record<string, string> = {};
    if (Buffer.byteLength(e.path) > 99) long.path = e.path;
    if (e.linkpath !== undefined && Buffer.byteLength(e.linkpath) > 99) long.linkpath = e.linkpath;
    if (Object.keys(long).length > 0) blocks.push(...pax(long));
    blocks.push(
      header(
        e.path.slice(0, 99),
        typeFlag[type],
        data.length,
        (e.linkpath ?? '').slice(0, 99),
        e.mode ?? (type === 'dir' ? 0o755 : 0o644),
      ),
      data,
      pad(data.length),
    );
  }
  blocks.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(blocks);
}

export const gzip = (data: Buffer) => gzipSync(data);
export const zstd = (data: Buffer) => zstdCompressSync(data);

export const sha256 = (data: Uint8Array) => `sha256:${createHash('sha256').update(data).digest('hex')}`;

export interface Blob {
  descriptor: Descriptor;
  data: Buffer;
}

export function blobOf(data: Buffer, mediaType: string): Blob {
  return { descriptor: { mediaType, digest: sha256(data), size: data.length }, data };
}

export const gzipLayer = (entries: TarEntry[]) => blobOf(gzip(tarOf(entries)), MediaType.OciLayerGzip);
export const zstdLayer = (entries: TarEntry[]) => blobOf(zstd(tarOf(entries)), MediaType.OciLayerZstd);
export const tarLayer = (entries: TarEntry[]) => blobOf(tarOf(entries), MediaType.OciLayer);

export interface TestImage {
  manifest: Buffer;
  digest: string;
  mediaType: string;
  config: Blob;
  layers: Blob[];
}

/** An image manifest over `layers`, with a config naming `platform`. */
export function imageOf(
  layers: Blob[],
  opts: { platform?: Platform; docker?: boolean; labels?: Record<string, string> } = {},
): TestImage {
  const platform = opts.platform ?? { os: 'linux', architecture: 'amd64' };
  const config = blobOf(
    Buffer.from(
      JSON.stringify({
        architecture: platform.architecture,
        os: platform.os,
        ...(platform.variant && { variant: platform.variant }),
        config: { Labels: opts.labels ?? {} },
        rootfs: { type: 'layers', diff_ids: layers.map((l) => l.descriptor.digest) },
      }),
    ),
    opts.docker ? MediaType.DockerConfig : MediaType.OciConfig,
  );
  const mediaType = opts.docker ? MediaType.DockerManifest : MediaType.OciManifest;
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType,
      config: config.descriptor,
      layers: layers.map((l) => l.descriptor),
    }),
  );
  return { manifest, digest: sha256(manifest), mediaType, config, layers };
}

/** An index over images, each with its platform. */
export function indexOf(
  images: { image: TestImage; platform: Platform }[],
  docker = false,
): { bytes: Buffer; digest: string; mediaType: string } {
  const mediaType = docker ? MediaType.DockerManifestList : MediaType.OciIndex;
  const bytes = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType,
      manifests: images.map(({ image, platform }) => ({
        mediaType: image.mediaType,
        digest: image.digest,
        size: image.manifest.length,
        platform,
      })),
    }),
  );
  return { bytes, digest: sha256(bytes), mediaType };
}
