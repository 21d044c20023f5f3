/**
 * The catalogs of OLM v1's ClusterCatalogs that the manager serves over catalogd's HTTP API: for
 * each ClusterCatalog by name, its content as a JSON Lines file in the spool (jsonl.ts) with the
 * index `/api/v1/metas` reads, the digest and image it came from, and when it last changed.
 * Written by the ClusterCatalog controller, read by the HTTP server (src/server/catalogd.ts).
 *
 * Names are keys of a map, never parts of a path: what a request names is looked up here, and a
 * name that is no ClusterCatalog's finds nothing. Content replaced or deleted has its file
 * removed, and its gzip-compressed copy (gzipFileOf) with it; a response already streaming either
 * keeps reading it (it holds the file open).
 */
import type { MetaIndex } from './jsonl.js';

export interface ServedCatalog {
  /** The JSON Lines file, in the spool. */
  file: string;
  size: number;
  index: MetaIndex;
  /** The content's digest (the image's), which tells new content from the same. */
  digest: string;
  /** The image pinned to that digest (`registry/repository@sha256:...`). */
  image: string;
  /** When the content last changed (milliseconds, whole seconds): `status.lastUnpacked`, `Last-Modified`. */
  lastModified: number;
}

export interface ServedCatalogs {
  get(name: string): ServedCatalog | undefined;
  /** Serves `catalog` under `name`, in place of what was served there (whose files are removed). */
  set(name: string, catalog: ServedCatalog): void;
  /** Stops serving `name` and removes its file (and its compressed copy). */
  delete(name: string): void;
}

/**
 * Where the gzip-compressed copy of a content's file is kept (src/server/catalogd-gzip.ts makes
 * it): beside the file, in the same spool, so that it goes with the file and with the spool.
 */
export const gzipFileOf = (file: string): string => `${file}.gz`;

export function servedCatalogs(deps: { remove: (file: string) => Promise<void> }): ServedCatalogs {
  const byName = new Map<string, ServedCatalog>();
  const release = (old: ServedCatalog | undefined, kept?: ServedCatalog) => {
    if (!old || old.file === kept?.file) return;
    void deps.remove(old.file);
    void deps.remove(gzipFileOf(old.file));
  };
  return {
    get: (name) => byName.get(name),
    set(name, catalog) {
      const old = byName.get(name);
      byName.set(name, catalog);
      release(old, catalog);
    },
    delete(name) {
      const old = byName.get(name);
      byName.delete(name);
      release(old);
    },
  };
}
