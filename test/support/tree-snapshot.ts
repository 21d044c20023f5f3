/**
 * Everything under a folder as it is on disk, links not followed: each file with its bytes, each
 * folder, each symbolic link with where it points. Two snapshots are equal exactly when a command
 * changed nothing there, not even an empty folder or a link.
 */
import { lstat, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';

export async function treeSnapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    const entries = await readdir(join(dir, rel), { withFileTypes: true });
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      const full = join(dir, path);
      if (e.isSymbolicLink()) out[path] = `link -> ${await readlink(full)}`;
      else if (e.isDirectory()) {
        out[path] = 'folder';
        await walk(path);
      } else if (e.isFile()) out[path] = `file ${(await readFile(full)).toString('base64')}`;
      else out[path] = `other (mode ${(await lstat(full)).mode.toString(8)})`;
    }
  };
  await walk('');
  return out;
}
