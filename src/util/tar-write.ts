/**
 * Tar archives written deterministically: the same files give the same bytes on every machine
 * (sorted entries, fixed mode, owner and mtime, and a gzip header with no name, no time and a
 * fixed OS byte), so an archive's or an image layer's digest depends on its files alone. Bundle
 * archives (bundle/archive.ts) and image layers (oci/build.ts) are written with it.
 */
import { gzipSync } from 'node:zlib';

/** Files by POSIX path relative to a root (`manifests/x.yaml`). */
export type FileMap = Map<string, Buffer>;

const BLOCK = 512;
/** 2000-01-01T00:00:00Z: a fixed mtime; 0 makes some tools warn about "implausibly old" files. */
const FIXED_MTIME = 946_684_800;

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
