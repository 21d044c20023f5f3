/**
 * ClusterExtension resolution figures (src/olmv1), with BOSUN_CORPUS_DIR: the 2021 OperatorHub
 * corpus served as one ClusterCatalog (its JSON Lines file and index, as the manager serves it),
 * and for each package a fresh install and an upgrade from its first bundle, five rounds:
 * - `read`: one package's documents through the index (readServedPackage + packageContent);
 * - `resolve`: resolveV1 over them;
 * p50 and p99 of each, per ClusterExtension.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeCatalogJsonl } from '../../src/catalog/content/jsonl.js';
import { importOperatorsDir } from '../../src/catalog/import.js';
import { listCatalogFiles } from '../../src/catalog/load.js';
import { writeCatalog } from '../../src/catalog/write.js';
import { packageContent, readServedPackage } from '../../src/olmv1/package-content.js';
import { resolveV1 } from '../../src/olmv1/resolve.js';
import type { Problem } from '../../src/util/result.js';
import type { Emit } from './run.js';

const ms = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e6;
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const ROUNDS = 5;

export default async function bench(emit: Emit): Promise<void> {
  const corpus = process.env.BOSUN_CORPUS_DIR;
  if (!corpus || !existsSync(corpus)) {
    process.stderr.write(
      'olmv1-resolve figures skipped: set BOSUN_CORPUS_DIR to the upstream-community-operators folder\n',
    );
    return;
  }
  const work = await mkdtemp(join(tmpdir(), 'bosun-bench-olmv1-'));
  try {
    const imported = await importOperatorsDir(corpus);
    await writeCatalog(join(work, 'catalog'), imported.config, { format: 'json' });
    const problems: Problem[] = [];
    const files = (await listCatalogFiles(join(work, 'catalog'), problems)).map((f) =>
      join(work, 'catalog', f),
    );
    const file = join(work, 'all.jsonl');
    const { index, size } = await writeCatalogJsonl(files, file);
    const packages = [...index.byPackage.keys()].sort();
    const read: number[] = [];
    const resolve: number[] = [];
    let resolved = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const pkg of packages) {
        let t = process.hrtime.bigint();
        const content = packageContent(await readServedPackage({ file, index }, pkg));
        read.push(ms(t));
        const catalogs = [{ name: 'operatorhubio', serving: true, content }];
        const first = content.bundles[0];
        const version = (
          first?.properties.find((p) => p.type === 'olm.package')?.value as { version?: string }
        )?.version;
        for (const installed of [undefined, first && version ? { name: first.name, version } : undefined]) {
          t = process.hrtime.bigint();
          const r = resolveV1({ packageName: pkg }, catalogs, installed);
          resolve.push(ms(t));
          if (r.ok && round === 0) resolved++;
        }
      }
    }
    read.sort((a, b) => a - b);
    resolve.sort((a, b) => a - b);
    const inputs = {
      catalog: 'operatorhub-2021',
      packages: packages.length,
      jsonlBytes: size,
      rounds: ROUNDS,
      resolved,
    };
    emit({ name: 'olmv1.corpus.read.p50', value: percentile(read, 0.5), unit: 'ms', inputs });
    emit({ name: 'olmv1.corpus.read.p99', value: percentile(read, 0.99), unit: 'ms', inputs });
    emit({ name: 'olmv1.corpus.resolve.p50', value: percentile(resolve, 0.5), unit: 'ms', inputs });
    emit({ name: 'olmv1.corpus.resolve.p99', value: percentile(resolve, 0.99), unit: 'ms', inputs });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
