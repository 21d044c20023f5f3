/**
 * Unpacked bundle images kept on disk, by the digest they were pulled at, so a bundle is pulled
 * once however often its InstallPlans are planned (every reconcile), and an upgrade or a second
 * namespace installing it pulls nothing. The folder is the manager's own (in its spool folder,
 * removed when it stops, swept when it died: spool.ts), so nothing outlives the manager and no
 * other process writes there.
 *
 * The cache holds at most `maxBytes`: putting an entry evicts the least recently used ones until
 * the rest fit (an entry larger than the bound is not kept at all). An entry is written to a
 * temporary file and renamed into place, so a reader never sees half of one. What is kept is
 * the manager's own output (the manifests it rendered of a verified image), keyed by a digest it
 * checked; the file name is made of the digest's hex only.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export class BundleImageCache {
  /** Digest → size, in order of use (the first is the least recently used). */
  private readonly entries = new Map<string, number>();
  private bytes = 0;

  private constructor(
    readonly dir: string,
    readonly maxBytes: number,
  ) {}

  /** A cache in `dir` (made if missing; what it held before is not trusted and is removed). */
  static async open(dir: string, maxBytes: number): Promise<BundleImageCache> {
    await rm(dir, { recursive: true, force: true });
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return new BundleImageCache(dir, maxBytes);
  }

  /** The bytes kept for `digest`, or undefined; a hit makes it the most recently used. */
  async get(digest: string): Promise<Buffer | undefined> {
    const size = this.entries.get(digest);
    if (size === undefined) return undefined;
    this.entries.delete(digest);
    this.entries.set(digest, size);
    try {
      return await readFile(this.pathOf(digest));
    } catch {
      // Removed under us (the folder is the manager's; only a person could): forget it.
      this.forget(digest);
      return undefined;
    }
  }

  has(digest: string): boolean {
    return this.entries.has(digest);
  }

  /** Keeps `data` for `digest`, evicting the least recently used entries beyond the bound. */
  async put(digest: string, data: Uint8Array): Promise<void> {
    if (data.length > this.maxBytes) return;
    const path = this.pathOf(digest);
    const temp = join(this.dir, `.${randomUUID()}.tmp`);
    await writeFile(temp, data, { flag: 'wx', mode: 0o600 });
    await rename(temp, path);
    this.forget(digest);
    this.entries.set(digest, data.length);
    this.bytes += data.length;
    for (const [old, size] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(old);
      this.bytes -= size;
      await rm(this.pathOf(old), { force: true });
    }
  }

  /** The bytes held now (for tests and metrics). */
  size(): number {
    return this.bytes;
  }

  private forget(digest: string) {
    const size = this.entries.get(digest);
    if (size === undefined) return;
    this.entries.delete(digest);
    this.bytes -= size;
  }

  private pathOf(digest: string): string {
    const [algorithm, hex] = digest.split(':');
    if (algorithm !== 'sha256' || !/^[0-9a-f]{64}$/.test(hex ?? ''))
      throw new Error(`bundle image cache: ${digest} is not a sha256 digest`);
    return join(this.dir, `${hex}.json`);
  }
}
