/**
 * Fetched catalog content kept on disk. A catalog's inline manifests are most of its bytes (over
 * 100 MB for the OperatorHub corpus) but are read only when a bundle is installed, so the
 * manager keeps them here and its memory holds only what resolution reads (see
 * src/catalog/payloads.ts and bundles.ts). An HTTP body is streamed straight to its file, so it is never whole
 * in memory; a catalog image is extracted straight into a folder of its own (folderFor), whose
 * files are parsed where they are. One file or folder per fetch, removed when the catalog store
 * lets go of that content or the content turns out unchanged or invalid; the whole spool goes
 * when the manager stops.
 *
 * A manager that dies without stopping (killed, out of memory, aborted) cannot remove its folder,
 * and each holds up to a whole copy of every catalog (about 0.5 GB with the corpus). So each
 * folder names its owner in a file `owner` (process id and, on Linux, the process's start time,
 * which tells a reused process id apart), and `sweepStaleSpools` removes, at the next start, the
 * folders whose owner is gone: only those, only this user's, and never one without an owner
 * file (one being created right now has none yet).
 */
import { createHash } from 'node:crypto';
import { createWriteStream, readFileSync } from 'node:fs';
import { lstat, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { catalogFileTooLarge, maxCatalogFileBytes } from '../limits.js';
import type { PartOfFile } from '../load-worker.js';
import { UserError } from '../../util/errors.js';
import { addToDigest } from './digest.js';
import type { CatalogRef } from './store.js';

export interface Spooled {
  /** The spooled file, or folder: what the store releases when it lets go of the content. */
  path: string;
  /** sha256 over each part's name and bytes, as digestOf computes it; a catalog image's own digest. */
  digest: string;
  /** Where each fetched file is on disk. */
  parts: PartOfFile[];
}

export class CatalogSpool {
  private written = 0;

  private constructor(readonly dir: string) {}

  static async open(parent = tmpdir()): Promise<CatalogSpool> {
    let dir: string;
    try {
      dir = await mkdtemp(join(parent, SpoolPrefix));
    } catch (err) {
      // The one place the manager writes is its temporary folder: a read-only or missing one is
      // the environment's to fix (TMPDIR, or the container's writable volume), not a bug.
      const code = (err as NodeJS.ErrnoException).code;
      if (
        code === 'EROFS' ||
        code === 'EACCES' ||
        code === 'EPERM' ||
        code === 'ENOENT' ||
        code === 'ENOTDIR'
      )
        throw new UserError(
          `cannot create the catalog spool in ${parent} (${code}): the manager keeps fetched catalogs in its temporary folder; ` +
            'set TMPDIR to a writable folder (in a container, mount a writable volume at /tmp)',
          1,
          { cause: err },
        );
      throw err;
    }
    await writeFile(join(dir, OwnerFile), JSON.stringify(ownerOf(process.pid)));
    return new CatalogSpool(dir);
  }

  /** Writes a catalog's files one after another (ConfigMap keys, in order of name). */
  async writeFiles(ref: CatalogRef, files: readonly { name: string; bytes: Buffer }[]): Promise<Spooled> {
    const sorted = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const hash = createHash('sha256');
    const path = this.nextPath(ref);
    const parts: PartOfFile[] = [];
    let base = 0;
    for (const f of sorted) {
      addToDigest(hash, f.name, [f.bytes]);
      parts.push({ name: f.name, file: path, base, length: f.bytes.length });
      base += f.bytes.length;
    }
    await writeFile(
      path,
      sorted.map((f) => f.bytes),
    );
    return { path, digest: `sha256:${hash.digest('hex')}`, parts };
  }

  /**
   * Streams one body (an HTTP response) to a file, hashing it on the way. A body that goes past
   * the catalog file limit is cut off there (`maxBytes`), its file removed, and refused with an
   * error naming the limit: it never reaches the parser, nor fills the disk.
   */
  async writeStream(
    ref: CatalogRef,
    name: string,
    body: AsyncIterable<Uint8Array>,
    maxBytes = maxCatalogFileBytes(),
  ): Promise<Spooled> {
    const path = this.nextPath(ref);
    // The same digest as addToDigest gives, fed as the bytes arrive.
    const hash = createHash('sha256').update(name).update('\0');
    let length = 0;
    try {
      await pipeline(
        body,
        async function* (chunks: AsyncIterable<Uint8Array>) {
          for await (const chunk of chunks) {
            length += chunk.length;
            if (length > maxBytes)
              throw new Error(`the body ${catalogFileTooLarge(length, { limit: maxBytes, sofar: true })}`);
            hash.update(chunk);
            yield chunk;
          }
        },
        createWriteStream(path),
      );
    } catch (err) {
      await this.remove(path);
      throw err;
    }
    hash.update('\0');
    return { path, digest: `sha256:${hash.digest('hex')}`, parts: [{ name, file: path, base: 0, length }] };
  }

  /**
   * A fresh path in the spool for content that is a folder (a catalog image's files, extracted
   * there by the pull itself, so they are written once and parsed where they are). The folder is
   * the caller's to make; `remove` takes it away whole.
   */
  folderFor(ref: CatalogRef): string {
    return this.nextPath(ref).replace(/\.fbc$/, '.d');
  }

  /** A fresh path in the spool for a file the caller writes itself, named with `suffix` (`.jsonl`). */
  fileFor(ref: CatalogRef, suffix: string): string {
    return this.nextPath(ref).replace(/\.fbc$/, suffix);
  }

  /**
   * Removes one spooled file, or folder (folderFor); one already gone is fine. Only what is in
   * this spool: the path is the store's, and nothing else is ever removed through it.
   */
  async remove(path: string): Promise<void> {
    if (dirname(path) !== this.dir) return;
    await rm(path, { recursive: true, force: true }).catch(() => undefined);
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  private nextPath(ref: CatalogRef): string {
    return join(this.dir, `${ref.namespace}_${ref.name}_${++this.written}.fbc`);
  }
}

const SpoolPrefix = 'bosun-catalogs-';
const OwnerFile = 'owner';

/** Who made a spool folder: a process id, and its start time where the system tells it. */
interface Owner {
  pid: number;
  start?: string;
}

function ownerOf(pid: number): Owner {
  const start = processStartTime(pid);
  return start === undefined ? { pid } : { pid, start };
}

/**
 * A process's start time in clock ticks since boot (field 22 of /proc/<pid>/stat), or undefined
 * where there is no /proc or no such process. After the command name, which may hold spaces and
 * parentheses, so the fields are counted from its closing parenthesis.
 */
function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

/** Whether the process that wrote `owner` still runs (a reused pid with another start time does not count). */
function ownerAlive(owner: Owner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    // EPERM: it runs, as another user.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  if (owner.start === undefined) return true;
  const now = processStartTime(owner.pid);
  return now === undefined || now === owner.start;
}

/**
 * Removes the spool folders under `parent` left by managers that are gone (see above); returns
 * the folders removed. A folder is left alone when it is not a directory of this user's, has no
 * readable owner file, or its owner runs.
 */
export async function sweepStaleSpools(parent = tmpdir()): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = (await readdir(parent)).filter((n) => n.startsWith(SpoolPrefix));
  } catch {
    return removed;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const dir = join(parent, name);
    try {
      const st = await lstat(dir);
      if (!st.isDirectory() || (uid !== undefined && st.uid !== uid)) continue;
      const owner = JSON.parse(await readFile(join(dir, OwnerFile), 'utf8')) as Partial<Owner>;
      if (!Number.isSafeInteger(owner.pid) || owner.pid! <= 0) continue;
      const known: Owner = {
        pid: owner.pid!,
        ...(typeof owner.start === 'string' ? { start: owner.start } : {}),
      };
      if (known.pid === process.pid && known.start === processStartTime(process.pid)) continue;
      if (ownerAlive(known)) continue;
      await rm(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // No owner file (being created, or from before owners were written), or gone meanwhile.
    }
  }
  return removed;
}
