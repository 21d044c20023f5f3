/**
 * `npm run bench -- <suite> [<suite>...]` runs benchmark suites and prints one JSON object per
 * figure on stdout: {"name", "value", "unit", "inputs"}. Benchmarks report; they never fail on a
 * figure. Each suite is `test/bench/<suite>.bench.ts` with a default export `(emit) => Promise<void>`.
 * Without names every suite runs but the long ones (`corpus-install`, `soak`, `ha`, `olmv1`), which run only when named.
 *
 * On a virtual machine the host may run other guests on the same cores; the share of CPU time it
 * took while a figure was measured (`steal_pct`, from /proc/stat, since the previous figure) says
 * how far a timing can be trusted.
 */
import { readFileSync } from 'node:fs';
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
/** Suites that take many minutes run only when named. */
const onlyWhenNamed = ['corpus-install', 'soak', 'ha', 'olmv1'];
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !available.includes(w));
if (unknown.length) {
  process.stderr.write(
    `unknown benchmark suite(s): ${unknown.join(', ')}; available: ${available.join(', ')}\n`,
  );
  process.exit(2);
}
/** The system's CPU time so far and the part of it stolen by the host, in clock ticks (Linux only). */
function cpuTicks(): { total: number; steal: number } | undefined {
  try {
    const fields = readFileSync('/proc/stat', 'utf8')
      .split('\n')[0]!
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number);
    // user nice system idle iowait irq softirq steal (guest time is already in user and nice)
    return { total: fields.slice(0, 8).reduce((a, b) => a + b, 0), steal: fields[7] ?? 0 };
  } catch {
    return undefined;
  }
}

let since = cpuTicks();
const emit: Emit = (f) => {
  const now = cpuTicks();
  const steal =
    since && now && now.total > since.total
      ? { steal_pct: Math.round((100 * (now.steal - since.steal)) / (now.total - since.total)) }
      : {};
  since = now;
  process.stdout.write(`${JSON.stringify({ ...f, inputs: { ...f.inputs, ...steal } })}\n`);
};
for (const suite of wanted.length ? wanted : available.filter((s) => !onlyWhenNamed.includes(s))) {
  const mod = (await import(new URL(`./${suite}.bench.ts`, here).href)) as { default: Suite };
  await mod.default((f) => emit({ ...f, inputs: { suite, ...f.inputs } }));
}
