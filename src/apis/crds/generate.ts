/**
 * `npm run gen:crds [dir]`: writes the CRDs for OLM's kinds to deploy/crds (or `dir`) and removes
 * CRD files there that are no longer generated.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../../util/fs.js';
import { crdFiles } from './index.js';

const dir = process.argv[2] ?? 'deploy/crds';
const files = crdFiles();
const wanted = new Set(files.map((f) => f.fileName));
for (const name of await readdir(dir).catch(() => [] as string[])) {
  if (name.endsWith('.yaml') && !wanted.has(name)) await rm(join(dir, name));
}
for (const f of files) {
  await writeFileAtomic(join(dir, f.fileName), f.content);
  console.log(join(dir, f.fileName));
}
