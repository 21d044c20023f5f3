import { randomBytes } from 'node:crypto';
import { readSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join, basename } from 'node:path';

/**
 * Writes a file so that readers see either the old content or the new, never half of it:
 * write a temporary sibling, then rename it over the target (rename is atomic on one filesystem).
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode?: number): Promise<void> {
  await mkdir(dirname(path), { recursive: true });
  const tmp = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(tmp, data, mode === undefined ? undefined : { mode });
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/**
 * Fills `into` with `length` bytes of the open file `fd` from byte `position` on (a single read
 * may return fewer); false when the file ends first.
 */
export function readFullySync(fd: number, into: Uint8Array, length: number, position: number): boolean {
  for (let n = 0; n < length;) {
    const got = readSync(fd, into, n, length - n, position + n);
    if (got === 0) return false;
    n += got;
  }
  return true;
}
