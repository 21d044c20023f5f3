/**
 * Fetched catalog content kept on disk. A catalog's inline manifests are most of its bytes (over
 * 100 MB for the OperatorHub corpus) but are read only when a bundle is installed, so the
 * manager keeps them here and its memory holds only what resolution reads (see
 * src/catalog/payloads.ts). One file per catalog and content digest, removed when the catalog
 * store lets go of that content; the whole folder goes when the manager stops.
 */
import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileSource, type PayloadSource } from '../catalog/payloads.js';
import type { CatalogRef } from './context.js';

export interface Spooled {
  path: string;
  source: PayloadSource;
  /** Where each file given to `write` starts in the spooled file. */
  bases: number[];
}

export class CatalogSpool {
  private constructor(readonly dir: string) {}

  static async open(parent = tmpdir()): Promise<CatalogSpool> {
    return new CatalogSpool(await mkdtemp(join(parent, 'bosun-catalogs-')));
  }

  /** Writes a catalog's files one after another. */
  async write(ref: CatalogRef, digest: string, files: readonly Buffer[]): Promise<Spooled> {
    const path = join(
      this.dir,
      `${ref.namespace}_${ref.name}_${digest.replace(/^sha256:/, '').slice(0, 16)}.fbc`,
    );
    const bases: number[] = [];
    let at = 0;
    for (const f of files) {
      bases.push(at);
      at += f.length;
    }
    await writeFile(path, files);
    return { path, source: fileSource(path), bases };
  }

  /** Removes one spooled file; one already gone is fine. */
  async remove(path: string): Promise<void> {
    await unlink(path).catch(() => undefined);
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
