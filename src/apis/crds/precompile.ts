/**
 * The last step of `npm run build`: compiles the checkers of catalog documents and CSVs and
 * writes their code beside check.js in dist/ (see check.ts), so that no `bosun` command compiles
 * a schema at run time. Old files go first: each is named by its schema's digest, and a schema
 * that changed would otherwise leave its previous code behind.
 */
import { rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

const dir = fileURLToPath(new URL('./compiled/', import.meta.url));
await rm(dir, { recursive: true, force: true });
// Imported only now, so that nothing is loaded from the files just removed.
const { writeCompiled } = await import('./check.js');
await import('../../catalog/schema.js');
const { compileCSVChecker } = await import('../../bundle/csv-schema.js');
compileCSVChecker();
const files = await writeCompiled(dir);
process.stderr.write(`precompiled ${files.length} schema checkers into ${dir}\n`);
