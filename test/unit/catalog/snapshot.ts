/** Every file under a directory with its content, to prove a command changed nothing. */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

export async function snapshot(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (rel: string) => {
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const path = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(path);
      else out[path] = (await readFile(join(dir, path))).toString('base64');
    }
  };
  await walk('');
  return out;
}
