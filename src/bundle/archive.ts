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
 * Writing produces the same bytes for the same files on every machine (util/tar-write.ts).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createZstdDecompress } from 'node:zlib';
import type { ReadEntry } from 'tar';
import type { Problem } from '../util/result.js';
import { type FileMap, gzipReproducible, packTar } from '../util/tar-write.js';
import { bundleTooLarge, DefaultReadLimits, fileTooLarge, type ReadLimits, readLimits } from './limits.js';

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
/** A tar block: headers and padding come in these. */
const BLOCK = 512;
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

/** A deterministic gzip-compressed tar of `files` (sorted by path; parent directories included). */
export function packArchive(files: FileMap): { data: Buffer; digest: string } {
  const gz = gzipReproducible(packTar(files));
  return { data: gz, digest: `sha256:${createHash('sha256').update(gz).digest('hex')}` };
}
