/**
 * Bundle archives (`.tar`, `.tar.gz`): read safely, streaming, and written deterministically.
 *
 * Reading never touches the filesystem beyond the archive itself: entries become an in-memory
 * file map, so a hostile archive cannot write anywhere; sizes are checked against the limits of
 * limits.ts before anything is kept. It is still refused, with a clear message,
 * when it holds what a bundle never needs and an extractor could be tricked by: paths with `..`
 * or a leading `/`, symlinks and hard links, device files, or more bytes than the limit once
 * inflated (a "zip bomb").
 *
 * Writing produces the same bytes for the same files on every machine: sorted entries, fixed
 * mode/owner/mtime, and a gzip header with no name, no time and a fixed OS byte.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createZstdDecompress, gzipSync } from 'node:zlib';
import type { ReadEntry } from 'tar';
import type { Problem } from '../util/result.js';
import { bundleTooLarge, DefaultReadLimits, fileTooLarge, type ReadLimits, readLimits } from './limits.js';

/** Files of an archive by POSIX path relative to its root (`manifests/x.yaml`). */
export type FileMap = Map<string, Buffer>;

/** How a tar stream is compressed, from its first bytes: gzip, zstd (Node's zlib reads both), or not at all. */
export type Compression = 'gzip' | 'zstd' | 'none';

const magic = (data: Uint8Array, bytes: number[]) =>
  data.length >= bytes.length && bytes.every((b, i) => data[i] === b);

export function compressionOf(data: Uint8Array): Compression {
  if (magic(data, [0x1f, 0x8b])) return 'gzip';
  if (magic(data, [0x28, 0xb5, 0x2f, 0xfd])) return 'zstd';
  return 'none';
}

/** Why an entry path is unsafe, or undefined when it is a plain relative path. */
export function unsafePathReason(path: string): string | undefined {
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return 'is an absolute path';
  if (path.includes('\\')) return 'contains a backslash';
  if (path.split('/').some((seg) => seg === '..')) return 'leaves the archive root with ".."';
  if (path.includes('\0')) return 'contains a NUL byte';
  return undefined;
}

export type ArchiveRead = { ok: true; files: FileMap } | { ok: false; errors: Problem[] };

/**
 * Reads a bundle archive file, streaming: its size is checked before it is opened, and reading
 * stops at the first entry or byte past the limits.
 */
export async function readArchiveFile(path: string, limits: ReadLimits = readLimits()): Promise<ArchiveRead> {
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch (err) {
    return {
      ok: false,
      errors: [{ file: path, message: `cannot read bundle archive: ${(err as Error).message}` }],
    };
  }
  // Compression never makes a tar smaller than its files by less than their headers' worth.
  if (size > limits.maxTotalBytes + tarOverhead(limits)) {
    return { ok: false, errors: [{ file: path, message: bundleTooLarge('the archive is already', limits) }] };
  }
  const head = Buffer.alloc(4);
  {
    await using handle = await open(path, 'r');
    await handle.read(head, 0, head.length, 0);
  }
  return readArchiveStream(createReadStream(path), compressionOf(head), path, limits);
}

/** Reads the regular files of a tar (optionally gzip- or zstd-compressed) held in memory. */
export function readArchive(
  data: Buffer,
  file: string,
  limits: ReadLimits = DefaultReadLimits,
): Promise<ArchiveRead> {
  return readArchiveStream(Readable.from([data]), compressionOf(data), file, limits);
}

/** Bytes of a tar stream beyond its files' data: a header per entry and the end blocks. */
const tarOverhead = (limits: ReadLimits) => (limits.maxEntries + 2) * 2 * BLOCK;

class PastLimit extends Error {}

/**
 * Every unsafe entry is reported, not just the first; any problem fails the whole archive. The
 * inflated stream is counted as it flows, so a "zip bomb" stops at the limit, and each file's
 * size is checked from its header before its data is kept.
 */
async function readArchiveStream(
  source: Readable,
  compression: Compression,
  file: string,
  limits: ReadLimits,
): Promise<ArchiveRead> {
  // Loaded here, not with the module: most commands never read an archive.
  const { Parser } = await import('tar');
  const files: FileMap = new Map();
  const errors: Problem[] = [];
  let entries = 0;
  let sawEntry = false;
  let total = 0;
  let overTotal = false;
  const problem = (path: string, message: string) => errors.push({ file: `${file}:${path}`, message });
  const parser = new Parser({ strict: true });
  parser.on('entry', (entry: ReadEntry) => {
    sawEntry = true;
    entries++;
    const path = entry.path.replace(/^\.\//, '');
    if (entries > limits.maxEntries) {
      if (entries === limits.maxEntries + 1)
        errors.push({ file, message: `archive has more than ${limits.maxEntries} entries` });
      entry.resume();
      return;
    }
    const unsafe = unsafePathReason(entry.path);
    if (unsafe) {
      problem(entry.path, `entry path ${unsafe}; a bundle archive holds only relative paths inside it`);
      entry.resume();
      return;
    }
    switch (entry.type) {
      case 'Directory':
        entry.resume();
        return;
      case 'File':
      case 'OldFile':
      case 'ContiguousFile': {
        total += entry.size;
        if (entry.size > limits.maxFileBytes) problem(path, fileTooLarge(entry.size, limits));
        else if (total > limits.maxTotalBytes && !overTotal) {
          overTotal = true;
          errors.push({ file, message: bundleTooLarge('the files of the archive go', limits) });
        }
        if (errors.length > 0) {
          entry.resume(); // the archive is refused: its data need not be kept
          return;
        }
        const chunks: Buffer[] = [];
        entry.on('data', (c: Buffer) => chunks.push(c));
        entry.on('end', () => {
          if (files.has(path)) problem(path, 'the archive holds this path twice');
          files.set(path, Buffer.concat(chunks));
        });
        return;
      }
      case 'SymbolicLink':
      case 'Link':
        problem(
          path,
          `${entry.type === 'Link' ? 'hard link' : 'symlink'} to "${entry.linkpath ?? ''}" is not allowed in a bundle archive`,
        );
        entry.resume();
        return;
      default:
        problem(path, `entry of type ${entry.type} is not allowed in a bundle archive`);
        entry.resume();
    }
  });
  parser.on('warn', (_code: string, message: string | Error) => {
    errors.push({
      file,
      message: `invalid tar archive: ${message instanceof Error ? message.message : message}`,
    });
  });
  let inflated = 0;
  const streamLimit = limits.maxTotalBytes + tarOverhead(limits);
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      inflated += chunk.length;
      done(inflated > streamLimit ? new PastLimit() : null, chunk);
    },
  });
  try {
    if (compression === 'gzip') await pipeline(source, createGunzip(), counter, parser);
    else if (compression === 'zstd') await pipeline(source, createZstdDecompress(), counter, parser);
    else await pipeline(source, counter, parser);
  } catch (err) {
    if (err instanceof PastLimit) {
      if (!overTotal) errors.push({ file, message: bundleTooLarge('archive inflates', limits) });
    } else if (compression !== 'none' && (err as NodeJS.ErrnoException).code?.startsWith('Z'))
      errors.push({ file, message: `not a valid ${compression} stream: ${(err as Error).message}` });
    else errors.push({ file, message: `invalid tar archive: ${(err as Error).message}` });
  }
  if (!sawEntry && errors.length === 0)
    errors.push({ file, message: 'the archive is empty or not a tar archive' });
  return errors.length ? { ok: false, errors } : { ok: true, files };
}

// ---- writing ----

const BLOCK = 512;
/** 2000-01-01T00:00:00Z: a fixed mtime; 0 makes some tools warn about "implausibly old" files. */
const FIXED_MTIME = 946_684_800;

/** A deterministic gzip-compressed tar of `files` (sorted by path; parent directories included). */
export function packArchive(files: FileMap): { data: Buffer; digest: string } {
  const gz = gzipReproducible(packTar(files));
  return { data: gz, digest: `sha256:${createHash('sha256').update(gz).digest('hex')}` };
}

/**
 * The uncompressed tar of `files`: entries sorted by path, each folder on the way as an entry of
 * its own, owner root, mode 0644 (folders 0755), the fixed mtime. Paths that do not fit a ustar
 * header are written with a PAX header, as Go's archive/tar writes them.
 */
export function packTar(files: FileMap): Buffer {
  const paths = [...files.keys()].sort();
  const dirs = new Set<string>();
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(`${parts.slice(0, i).join('/')}/`);
  }
  const blocks: Buffer[] = [];
  const data = (body: Buffer) => {
    if (!body.length) return;
    blocks.push(body);
    const pad = (BLOCK - (body.length % BLOCK)) % BLOCK;
    if (pad) blocks.push(Buffer.alloc(pad));
  };
  for (const entry of [...dirs, ...paths].sort()) {
    const isDir = entry.endsWith('/');
    const body = isDir ? Buffer.alloc(0) : files.get(entry)!;
    const split = ustarName(entry);
    if (!split) {
      const record = paxRecord('path', entry);
      blocks.push(tarHeader({ name: 'PaxHeader', prefix: '' }, record.length, 'x'));
      data(record);
    }
    blocks.push(tarHeader(split ?? { name: entry.slice(0, 99), prefix: '' }, body.length, isDir ? '5' : '0'));
    data(body);
  }
  blocks.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(blocks);
}

/** gzip whose bytes depend only on the input: no name, no time, and a fixed OS byte. */
export function gzipReproducible(data: Buffer): Buffer {
  const gz = gzipSync(data, { level: 9 });
  // Byte 9 is the OS that wrote the stream; zlib fills in the build platform. 255 ("unknown")
  // is what Go's gzip writes and keeps the digest equal across machines.
  gz[9] = 0xff;
  return gz;
}

/** ustar's split of a long path at a slash into prefix (155 bytes) and name (100); undefined when none fits. */
function ustarName(path: string): { name: string; prefix: string } | undefined {
  if (Buffer.byteLength(path) <= 100) return { name: path, prefix: '' };
  // The last slash first (a folder's own trailing one aside), as the packer always split.
  for (let cut = path.lastIndexOf('/', path.length - 2); cut > 0; cut = path.lastIndexOf('/', cut - 1)) {
    const prefix = path.slice(0, cut);
    const name = path.slice(cut + 1);
    if (Buffer.byteLength(name) > 100) return undefined;
    if (Buffer.byteLength(prefix) <= 155) return { name, prefix };
  }
  return undefined;
}

/** One PAX record, `<length> <key>=<value>\n`, whose length counts its own digits. */
function paxRecord(key: string, value: string): Buffer {
  const rest = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(rest);
  while (String(length).length + Buffer.byteLength(rest) !== length)
    length = String(length).length + Buffer.byteLength(rest);
  return Buffer.from(`${length}${rest}`);
}

function tarHeader(path: { name: string; prefix: string }, size: number, type: '0' | '5' | 'x'): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(path.name, 0, 100, 'utf8');
  writeOctal(h, 100, 8, type === '5' ? 0o755 : 0o644);
  writeOctal(h, 108, 8, 0); // uid
  writeOctal(h, 116, 8, 0); // gid
  writeOctal(h, 124, 12, size);
  writeOctal(h, 136, 12, FIXED_MTIME);
  h.fill(' ', 148, 156); // checksum is computed with its own field as spaces
  h.write(type, 156, 1, 'latin1');
  h.write('ustar\0', 257, 6, 'latin1');
  h.write('00', 263, 2, 'latin1');
  h.write(path.prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  writeOctal(h, 148, 7, sum);
  h[155] = 0x20;
  return h;
}

function writeOctal(buf: Buffer, offset: number, length: number, value: number): void {
  buf.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'latin1');
}
