/**
 * `npm run bench -- <suite> [<suite>...]` runs benchmark suites and prints one JSON object per
 * figure on stdout: {"name", "value", "unit", "inputs"}. Benchmarks report; they never fail on a
 * figure. Each suite is `test/bench/<suite>.bench.ts` with a default export `(emit) => Promise<void>`.
 */
import { readdir } from 'node:fs/promises';

export interface Figure {
  name: string;
  value: number;
  unit: string;
  inputs?: Record<string, unknown>;
}
export type Emit = (figure: Figure) => void;
export type Suite = (emit: Emit) => Promise<void>;

const here = new URL('.', import.meta.url);
const available = (await readdir(here))
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.replace('.bench.ts', ''));
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !available.includes(w));
if (unknown.length) {
  process.stderr.write(
    `unknown benchmark suite(s): ${unknown.join(', ')}; available: ${available.join(', ')}\n`,
  );
  process.exit(2);
}
const emit: Emit = (f) => process.stdout.write(`${JSON.stringify(f)}\n`);
for (const suite of wanted.length ? wanted : available) {
  const mod = (await import(new URL(`./${suite}.bench.ts`, here).href)) as { default: Suite };
  await mod.default((f) => emit({ ...f, inputs: { suite, ...f.inputs } }));
}
