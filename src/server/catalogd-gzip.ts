/**
 * The gzip-compressed copy of each served catalog's content, so that `/api/v1/all` gzipped is
 * compressed once per content rather than once per request (the 2021 corpus, 116 MiB of JSON
 * Lines, takes about 5 s of CPU to compress; the plain file streams in well under a second).
 *
 * The copy is made on the first gzip request for a content, not when the content is prepared: a
 * catalog nobody reads gzipped costs nothing, and the ClusterCatalog's unpack (and the manager's
 * memory peak while it pulls) stays as it was. It is made in the background, from the content's
 * file to a temporary file beside it, then renamed into place (gzipFileOf), so a copy that exists
 * is whole; requests that come meanwhile are compressed as they stream. One copy is made at a time
 * per content, whatever the number of requests, and it never holds the body in memory.
 *
 * The copy is the content's own: served.ts removes it with the content's file when the content is
 * replaced or its catalog goes. A copy finished after that (its removal found nothing) is removed
 * here, and so is a temporary file whose making failed.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { type FileHandle, open, rename } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { gzipFileOf, type ServedCatalog, type ServedCatalogs } from '../catalog/content/served.js';

export interface GzipCopy {
  /** The copy, open: it stays readable to the end even if the content is replaced meanwhile. */
  handle: FileHandle;
  size: number;
}

export interface GzipCopies {
  /**
   * The compressed copy of `catalog` (served under `name`), opened; or undefined while there is
   * none, in which case its making is started, unless under way or the content is no longer served.
   */
  open(name: string, catalog: ServedCatalog): Promise<GzipCopy | undefined>;
  /** Resolves once no copy is being made (for tests and shutdown). */
  settled(): Promise<void>;
}

export function gzipCopies(deps: {
  catalogs: Pick<ServedCatalogs, 'get'>;
  /** Removes a file of the spool (the content's own remove: it removes nothing outside it). */
  remove: (file: string) => Promise<void>;
  /** Told when making a copy failed. */
  onError?: (err: unknown, file: string) => void;
}): GzipCopies {
  /** The content files whose copy is being made, and the making. */
  const making = new Map<string, Promise<void>>();
  /**
   * The content files whose copy could not be made: their gzip answers are compressed as they
   * stream from then on, rather than each request trying again (on a full disk, that would
   * compress every answer twice). New content gets a copy of its own.
   */
  const failed = new Set<string>();
  const isServed = (name: string, catalog: ServedCatalog) => deps.catalogs.get(name)?.file === catalog.file;

  async function make(name: string, catalog: ServedCatalog): Promise<void> {
    const target = gzipFileOf(catalog.file);
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      await pipeline(createReadStream(catalog.file), createGzip(), createWriteStream(temp, { flags: 'wx' }));
      await rename(temp, target);
    } catch (err) {
      await deps.remove(temp);
      // Content removed while it was read (replaced, or the manager stopping) is no failure.
      if (isServed(name, catalog)) {
        failed.add(catalog.file);
        deps.onError?.(err, catalog.file);
      }
      return;
    }
    // Replaced or gone while the copy was made: served.ts removed the copy before it existed.
    if (!isServed(name, catalog)) await deps.remove(target);
  }

  return {
    async open(name, catalog) {
      const file = catalog.file;
      const copy = await openCopy(gzipFileOf(file));
      if (copy) return copy;
      // A request still reading content since replaced starts no copy of it.
      if (!making.has(file) && !failed.has(file) && isServed(name, catalog))
        making.set(
          file,
          make(name, catalog).finally(() => making.delete(file)),
        );
      return undefined;
    },
    async settled() {
      while (making.size > 0) await Promise.all(making.values());
    },
  };
}

/** The copy at `path` opened, or undefined when there is none: anything but a regular file is none. */
async function openCopy(path: string): Promise<GzipCopy | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const stat = await handle.stat();
    if (stat.isFile()) return { handle, size: stat.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
  await handle.close();
  return undefined;
}
