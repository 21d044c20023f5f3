/**
 * Bundle archives (`.tar`, `.tar.gz`): read safely into memory, and write deterministically.
 *
 * Reading never touches the filesystem beyond the archive itself: entries become an in-memory
 * file map, so a hostile archive cannot write anywhere. It is still refused, with a clear message,
 * when it holds what a bundle never needs and an extractor could be tricked by: paths with `..`
 * or a leading `/`, symlinks and hard links, device files, or more bytes than the limit once
 * inflated (a "zip bomb").
 *
 * Writing produces the same bytes for the same files on every machine: sorted entries, fixed
 * mode/owner/mtime, and a gzip header with no name, no time and a fixed OS byte.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { ReadEntry } from 'tar';
import type { Problem } from '../util/result.js';

/** Files of an archive by POSIX path relative to its root (`manifests/x.yaml`). */
export type FileMap = Map<string, Buffer>;

export interface ArchiveLimits {
  /** Total bytes of the inflated tar stream. */
  maxBytes: number;
  maxEntries: number;
}

/** A bundle is a few MiB at most; 64 MiB leaves room for huge CRDs and still stops a bomb early. */
export const DefaultArchiveLimits: ArchiveLimits = { maxBytes: 64 * 1024 * 1024, maxEntries: 10_000 };

const GZIP_MAGIC = [0x1f, 0x8b];

export function isGzip(data: Uint8Array): boolean {
  return data.length >= 2 && data[0] === GZIP_MAGIC[0] && data[1] === GZIP_MAGIC[1];
}

/** Why an entry path is unsafe, or undefined when it is a plain relative path. */
export function unsafePathReason(path: string): string | undefined {
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path)) return 'is an absolute path';
  if (path.includes('\\')) return 'contains a backslash';
  if (path.split('/').some((seg) => seg === '..')) return 'leaves the archive root with ".."';
  if (path.includes('\0')) return 'contains a NUL byte';
  return undefined;
}

/**
 * Reads the regular files of a tar (optionally gzip-compressed) held in memory. Every unsafe entry
 * is reported, not just the first; any problem fails the whole archive.
 */
export async function readArchive(
  data: Buffer,
  file: string,
  limits: ArchiveLimits = DefaultArchiveLimits,
): Promise<{ ok: true; files: FileMap } | { ok: false; errors: Problem[] }> {
  let tarBytes: Buffer;
  if (isGzip(data)) {
    try {
      // maxOutputLength makes zlib stop as soon as the output passes the limit instead of
      // inflating a bomb into memory first.
      tarBytes = gunzipSync(data, { maxOutputLength: limits.maxBytes + 1 });
    } catch (err) {
      if (err instanceof RangeError || (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
        return {
          ok: false,
          errors: [{ file, message: `archive inflates past the limit of ${limits.maxBytes} bytes` }],
        };
      }
      return { ok: false, errors: [{ file, message: `not a valid gzip stream: ${(err as Error).message}` }] };
    }
  } else {
    tarBytes = data;
  }
  if (tarBytes.length > limits.maxBytes) {
    return {
      ok: false,
      errors: [{ file, message: `archive inflates past the limit of ${limits.maxBytes} bytes` }],
    };
  }
  // Loaded here, not with the module: most commands never read an archive.
  const { Parser } = await import('tar');
  return parseTar(Parser, tarBytes, file, limits);
}

function parseTar(
  Parser: typeof import('tar').Parser,
  tarBytes: Buffer,
  file: string,
  limits: ArchiveLimits,
): Promise<{ ok: true; files: FileMap } | { ok: false; errors: Problem[] }> {
  return new Promise((resolve) => {
    const files: FileMap = new Map();
    const errors: Problem[] = [];
    let entries = 0;
    let sawEntry = false;
    const parser = new Parser({ strict: true });
    const problem = (path: string, message: string) => errors.push({ file: `${file}:${path}`, message });

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
    parser.on('error', (err: Error) => errors.push({ file, message: `invalid tar archive: ${err.message}` }));
    parser.on('end', () => {
      if (!sawEntry && errors.length === 0)
        errors.push({ file, message: 'the archive is empty or not a tar archive' });
      resolve(errors.length ? { ok: false, errors } : { ok: true, files });
    });
    parser.end(tarBytes);
  });
}

// ---- writing ----

const BLOCK = 512;
/** 2000-01-01T00:00:00Z: a fixed mtime; 0 makes some tools warn about "implausibly old" files. */
const FIXED_MTIME = 946_684_800;

/** A deterministic gzip-compressed tar of `files` (sorted by path; parent directories included). */
export function packArchive(files: FileMap): { data: Buffer; digest: string } {
  const paths = [...files.keys()].sort();
  const dirs = new Set<string>();
  for (const p of paths) {
    const parts = p.split('/');
    for (let i = 1; i < parts.length; i++) dirs.add(`${parts.slice(0, i).join('/')}/`);
  }
  const blocks: Buffer[] = [];
  for (const entry of [...dirs, ...paths].sort()) {
    const isDir = entry.endsWith('/');
    const body = isDir ? Buffer.alloc(0) : files.get(entry)!;
    blocks.push(tarHeader(entry, body.length, isDir));
    if (body.length) {
      blocks.push(body);
      const pad = (BLOCK - (body.length % BLOCK)) % BLOCK;
      if (pad) blocks.push(Buffer.alloc(pad));
    }
  }
  blocks.push(Buffer.alloc(BLOCK * 2));
  const gz = gzipSync(Buffer.concat(blocks), { level: 9 });
  // Byte 9 is the OS that wrote the stream; zlib fills in the build platform. 255 ("unknown")
  // is what Go's gzip writes and keeps the digest equal across machines.
  gz[9] = 0xff;
  return { data: gz, digest: `sha256:${createHash('sha256').update(gz).digest('hex')}` };
}

function tarHeader(path: string, size: number, isDir: boolean): Buffer {
  const h = Buffer.alloc(BLOCK);
  let name = path;
  let prefix = '';
  if (Buffer.byteLength(name) > 100) {
    // ustar splits long paths at a slash into prefix (155 bytes) and name (100 bytes).
    const cut = path.lastIndexOf('/', path.length - 2);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
    if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) {
      throw new Error(`path too long for a tar header: ${path}`);
    }
  }
  h.write(name, 0, 100, 'utf8');
  writeOctal(h, 100, 8, isDir ? 0o755 : 0o644);
  writeOctal(h, 108, 8, 0); // uid
  writeOctal(h, 116, 8, 0); // gid
  writeOctal(h, 124, 12, size);
  writeOctal(h, 136, 12, FIXED_MTIME);
  h.fill(' ', 148, 156); // checksum is computed with its own field as spaces
  h.write(isDir ? '5' : '0', 156, 1, 'latin1');
  h.write('ustar\0', 257, 6, 'latin1');
  h.write('00', 263, 2, 'latin1');
  h.write(prefix, 345, 155, 'utf8');
  let sum = 0;
  for (const b of h) sum += b;
  writeOctal(h, 148, 7, sum);
  h[155] = 0x20;
  return h;
}

function writeOctal(buf: Buffer, offset: number, length: number, value: number): void {
  buf.write(`${value.toString(8).padStart(length - 1, '0')}\0`, offset, length, 'latin1');
}
