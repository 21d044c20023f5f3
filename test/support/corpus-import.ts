/**
 * The 2021 OperatorHub corpus as one file-based catalog: `bosun catalog import --skip-invalid
 * <corpus> <dir>`, run once per integration run and shared by the test files that read it (the
 * gRPC, image and opm comparisons, the web catalog's corpus grid). Each import took 25 to 35 s on
 * two cores and the same command gives the same catalog, so later files take the first one's
 * output and its result. Readers only: a test that changes the catalog copies it first.
 */
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { inject } from 'vitest';
import { runBosun, type Run } from '../unit/cli/run-bosun.js';

export interface CorpusImport extends Run {
  /** The catalog folder the import wrote. */
  dir: string;
}

/**
 * The corpus imported into the run's folder (global setup's `runDir`), imported now if no file
 * before this one did. The exit code and output are the import's own, for the caller to check.
 */
export async function importedCorpus(corpus: string): Promise<CorpusImport> {
  const shared = join(inject('runDir'), 'corpus-import');
  const dir = join(shared, 'catalog');
  const result = join(shared, 'result.json');
  const started = Date.now();
  if (!existsSync(result)) {
    // Written aside and renamed into place whole, so a folder seen at `shared` is always complete.
    const partial = `${shared}.partial-${process.pid}`;
    await rm(partial, { recursive: true, force: true });
    await mkdir(partial, { recursive: true });
    const run = await runBosun(['catalog', 'import', '--skip-invalid', corpus, join(partial, 'catalog')]);
    await writeFile(join(partial, 'result.json'), JSON.stringify({ corpus, ...run }));
    await rename(partial, shared).catch(async (err: NodeJS.ErrnoException) => {
      // Another file imported it meanwhile: theirs is kept.
      if (err.code !== 'ENOTEMPTY' && err.code !== 'EEXIST') throw err;
      await rm(partial, { recursive: true, force: true });
    });
  }
  console.log(`the corpus import of this run, ready in ${Date.now() - started} ms: ${dir}`);
  const saved = JSON.parse(await readFile(result, 'utf8')) as Run & { corpus: string };
  if (saved.corpus !== corpus)
    throw new Error(`${shared} holds an import of ${saved.corpus}, not of ${corpus}`);
  return { dir, code: saved.code, stdout: saved.stdout, stderr: saved.stderr };
}
