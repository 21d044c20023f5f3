/**
 * Fetched catalog content kept on disk. A catalog's inline manifests are most of its bytes (over
 * 100 MB for the OperatorHub corpus) but are read only when a bundle is installed, so the
 * manager keeps them here and its memory holds only what resolution reads (see
 * src/catalog/payloads.ts). An HTTP body is streamed straight to its file, so it is never whole
 * in memory. One file per fetch, removed when the catalog store lets go of that content or the
 * content turns out unchanged; the whole folder goes when the manager stops.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FilePart } from '../catalog/load-worker.js';
import { catalogFileTooLarge, maxCatalogFileBytes } from '../catalog/limits.js';
import { addToDigest } from './catalogsource-content.js';
import type { CatalogRef } from './context.js';

export interface Spooled {
  path: string;
  /** sha256 over each part's name and bytes, as digestOf computes it. */
  digest: string;
  /** Where each fetched file is in the spooled file. */
  parts: FilePart[];
}

export class CatalogSpool {
  private written = 0;

  private constructor(readonly dir: string) {}

  static async open(parent = tmpdir()): Promise<CatalogSpool> {
    return new CatalogSpool(await mkdtemp(join(parent, 'bosun-catalogs-')));
  }

  /** Writes a catalog's files one after another (ConfigMap keys, in order of name). */
  async writeFiles(ref: CatalogRef, files: readonly { name: string; bytes: Buffer }[]): Promise<Spooled> {
    const sorted = [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    const hash = createHash('sha256');
    const parts: FilePart[] = [];
    let base = 0;
    for (const f of sorted) {
      addToDigest(hash, f.name, [f.bytes]);
      parts.push({ name: f.name, base, length: f.bytes.length });
      base += f.bytes.length;
    }
    const path = this.nextPath(ref);
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
    return { path, digest: `sha256:${hash.digest('hex')}`, parts: [{ name, base: 0, length }] };
  }

  /** Removes one spooled file; one already gone is fine. */
  async remove(path: string): Promise<void> {
    await unlink(path).catch(() => undefined);
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  private nextPath(ref: CatalogRef): string {
    return join(this.dir, `${ref.namespace}_${ref.name}_${++this.written}.fbc`);
  }
}
