/**
 * `npm test`: the unit project and the integration project's lanes at the same time, each in its
 * own vitest. One vitest runs its projects one after the other when any runs its files one at a
 * time, and the integration project must (its files share one control plane, where two managers
 * would fight over the same objects). So the integration files are split into lanes (vitest's
 * `--shard`), each with a control plane of its own (its global setup starts one), and run beside
 * the unit project: most of an integration file's time is spent waiting on the API server.
 * `BOSUN_TEST_LANES` sets the number of lanes (default 2; 1 against `BOSUN_TEST_KUBECONFIG`, a
 * cluster the lanes would share). dist/, which tests start bosun processes from, is built here
 * first, once, so that lanes do not build it over each other.
 *
 * Arguments go to every run (`npm test -- test/unit/x.test.ts` runs what matches), but
 * `--project <name>`, which picks the projects run. Each run writes a JSON report of its own; with
 * `--outputFile.json=<file>` they are merged into `<file>`. Each line a run prints is prefixed
 * with its name.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureBuilt } from './support/bosun-build.js';

const projects = ['unit', 'integration'] as const;
const jsonFlag = '--outputFile.json=';

interface JsonReport {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numTotalTestSuites: number;
  numPassedTestSuites: number;
  numFailedTestSuites: number;
  numPendingTestSuites: number;
  startTime: number;
  success: boolean;
  testResults: unknown[];
}

// The command vitest's package installs (the package exports no path to it).
const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
const given = process.argv.slice(2);
const picked = given.flatMap((a, i) =>
  a === '--project' ? [given[i + 1] ?? ''] : a.startsWith('--project=') ? [a.slice('--project='.length)] : [],
);
const args = given.filter(
  (a, i) => a !== '--project' && given[i - 1] !== '--project' && !a.startsWith('--project='),
);
const chosen = projects.filter((p) => picked.length === 0 || picked.includes(p));
const asked = args.find((a) => a.startsWith(jsonFlag))?.slice(jsonFlag.length);
const lanes = process.env.BOSUN_TEST_KUBECONFIG ? 1 : Number(process.env.BOSUN_TEST_LANES ?? '2');
if (!Number.isInteger(lanes) || lanes < 1) {
  process.stderr.write(
    `BOSUN_TEST_LANES must be a whole number of at least 1, not ${JSON.stringify(process.env.BOSUN_TEST_LANES)}\n`,
  );
  process.exit(2);
}
const scratch = await mkdtemp(join(tmpdir(), 'bosun-test-'));
// Each run writes a JSON report, asked for or not: the merged one tells whether anything ran.
const reporters = args.some((a) => a.startsWith('--reporter')) ? [] : ['--reporter=default'];
const own = [...reporters, ...args.filter((a) => !a.startsWith(jsonFlag))];
if (!own.includes('--reporter=json')) own.push('--reporter=json');

/** One run: a project, or one lane of it. */
interface Run {
  name: string;
  project: (typeof projects)[number];
  shard?: string;
}

const runs: Run[] = chosen.flatMap((project): Run[] =>
  project === 'integration' && lanes > 1
    ? Array.from({ length: lanes }, (_, i) => ({
        name: `${project} ${i + 1}/${lanes}`,
        project,
        shard: `${i + 1}/${lanes}`,
      }))
    : [{ name: project, project }],
);

/** One run's vitest: its exit code and the file of its JSON report. */
function start(r: Run, index: number): Promise<{ code: number; report: string }> {
  const report = join(scratch, `${index}.json`);
  // A filter that matches no file of this run is not a failure; matching none in all is (below).
  const argv = [vitest, 'run', '--project', r.project, '--passWithNoTests', ...own, `${jsonFlag}${report}`];
  if (r.shard) argv.push(`--shard=${r.shard}`);
  const child = spawn(process.execPath, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  for (const [from, to] of [
    [child.stdout, process.stdout],
    [child.stderr, process.stderr],
  ] as const) {
    createInterface({ input: from }).on('line', (line) => to.write(`[${r.name}] ${line}\n`));
  }
  // Ctrl-C reaches every run through the terminal; a kill of this process is passed on.
  for (const signal of ['SIGTERM', 'SIGHUP'] as const) process.once(signal, () => child.kill(signal));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code: code ?? 1, report })));
}

function merge(reports: JsonReport[]): JsonReport {
  const sum = (k: keyof JsonReport) => reports.reduce((n, r) => n + (r[k] as number), 0);
  return {
    ...reports[0]!,
    numTotalTests: sum('numTotalTests'),
    numPassedTests: sum('numPassedTests'),
    numFailedTests: sum('numFailedTests'),
    numPendingTests: sum('numPendingTests'),
    numTodoTests: sum('numTodoTests'),
    numTotalTestSuites: sum('numTotalTestSuites'),
    numPassedTestSuites: sum('numPassedTestSuites'),
    numFailedTestSuites: sum('numFailedTestSuites'),
    numPendingTestSuites: sum('numPendingTestSuites'),
    startTime: Math.min(...reports.map((r) => r.startTime)),
    success: reports.every((r) => r.success),
    testResults: reports.flatMap((r) => r.testResults),
  };
}

if (chosen.includes('integration')) await ensureBuilt((l) => process.stderr.write(`[build] ${l}\n`));
const results = await Promise.all(runs.map(start));
let code = results.some((r) => r.code !== 0) ? 1 : 0;
// A run that died before writing its report has none: its exit code has failed the run already.
const reports: JsonReport[] = [];
for (const r of results) {
  const text = await readFile(r.report, 'utf8').catch(() => undefined);
  if (text !== undefined) reports.push(JSON.parse(text) as JsonReport);
}
await rm(scratch, { recursive: true, force: true });
const merged = reports.length > 0 ? merge(reports) : undefined;
if (asked !== undefined && merged) await writeFile(asked, JSON.stringify(merged));
if (code === 0 && (merged?.numTotalTests ?? 0) === 0) {
  process.stderr.write('no test file matched the arguments in any project\n');
  code = 1;
}
process.exit(code);
