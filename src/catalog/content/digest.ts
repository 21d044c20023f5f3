/**
 * A catalog's digest: what tells fetched content apart from the content last fetched, so a poll
 * that finds the same bytes parses nothing and tells no reader. Each fetched file (a ConfigMap
 * key's value, an HTTP body) adds its name, a NUL, its bytes and a NUL, in order of name; the
 * spool computes the same while it writes (spool.ts), so content spooled and content digested in
 * memory agree.
 */
import { createHash, type Hash } from 'node:crypto';

/** One fetched file: a ConfigMap key's value or an HTTP response body. */
export interface FetchedFile {
  name: string;
  text: string | Buffer;
}

/** A catalog's digest: each file, in order of name, as addToDigest adds it. */
export function digestOf(files: readonly FetchedFile[]): string {
  const h = createHash('sha256');
  for (const f of [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    addToDigest(h, f.name, [f.text]);
  }
  return `sha256:${h.digest('hex')}`;
}

/** One file's share of a catalog digest: its name, a NUL, its bytes, a NUL. */
export function addToDigest(hash: Hash, name: string, chunks: Iterable<Uint8Array | string>): void {
  hash.update(name).update('\0');
  for (const c of chunks) hash.update(c);
  hash.update('\0');
}
