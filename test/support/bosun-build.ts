/**
 * The compiled Bosun (dist/, what `npm run build` and npm ci's `prepare` write) that tests run as
 * a process of its own (bin/bosun.js): a process started from dist is ready about 1.5 s sooner
 * than one that compiles src/ with tsx on every start, and the integration run starts some 70.
 * A process must run the sources under test, never an older build: the integration run's global
 * setup calls ensureBuilt(), which builds again when any source is newer than its output.
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

export const repo = resolve(import.meta.dirname, '../..');
/** The `bosun` command as npm installs it; it loads dist/. */
export const bosunBin = join(repo, 'bin/bosun.js');

/** Sources tsconfig.build.json leaves out: they have no output in dist/. */
const NotBuilt = new Set(['apis/crds/generate.ts', 'apis/crds/generate-kubernetes.ts']);
/** The files of the web page that copy-client.js copies as they are. */
const Copied = /\.(html|css|js|svg)$/;

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

const mtime = (file: string) => statSync(file).mtimeMs;

/**
 * Why dist/ does not hold the build of the sources as they are now, or undefined when it does.
 * Each source must have its output, written no earlier than the source (tsc compiles each file
 * on its own here, `isolatedModules`), and the schema checkers precompile.js writes last must be
 * newer than every source and build configuration file, since they are made from several.
 */
export function staleBuild(root = repo): string | undefined {
  const src = join(root, 'src');
  const dist = join(root, 'dist');
  const configs = ['tsconfig.json', 'tsconfig.build.json', 'package.json'].map((f) => join(root, f));
  let newest = Math.max(...configs.map(mtime));
  for (const file of filesUnder(src)) {
    const rel = relative(src, file);
    let out: string | undefined;
    if (rel.endsWith('.ts') && !rel.endsWith('.d.ts') && !NotBuilt.has(rel))
      out = rel.replace(/\.ts$/, '.js');
    else if (rel.startsWith(join('web', 'client') + '/') && Copied.test(rel)) out = rel;
    else continue;
    const written = join(dist, out);
    if (!existsSync(written)) return `dist/${out} is missing`;
    if (mtime(written) < mtime(file)) return `src/${rel} is newer than dist/${out}`;
    newest = Math.max(newest, mtime(file));
  }
  const compiled = join(dist, 'apis/crds/compiled');
  const checkers = existsSync(compiled) ? filesUnder(compiled) : [];
  if (checkers.length === 0) return 'dist/apis/crds/compiled has no schema checkers';
  if (Math.min(...checkers.map(mtime)) < newest) return 'dist/apis/crds/compiled is older than the sources';
  return undefined;
}

function run(file: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((done) => {
    execFile(file, args, { cwd: repo, maxBuffer: 64 * 2 ** 20 }, (err, stdout, stderr) =>
      done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
}

/**
 * Builds dist/ as `npm run build` does when staleBuild() finds it out of date (in CI, npm ci has
 * just built it and this costs a few milliseconds). A type error does not stop the build: tsc
 * still writes every file (its exit code 2), and the tests run the sources whether they type-check
 * or not, as vitest does; a source tsc cannot emit (exit code 1) fails the run.
 */
export async function ensureBuilt(log: (line: string) => void): Promise<void> {
  const why = staleBuild();
  if (!why) return;
  const started = Date.now();
  log(`building dist/ for the processes tests start (${why})`);
  const tsc = await run(process.execPath, [
    join(repo, 'node_modules/typescript/bin/tsc'),
    '-p',
    'tsconfig.build.json',
  ]);
  if (tsc.code !== 0 && tsc.code !== 2) throw new Error(`tsc -p tsconfig.build.json failed:\n${tsc.output}`);
  for (const step of ['dist/apis/crds/precompile.js', 'dist/web/copy-client.js']) {
    const r = await run(process.execPath, [join(repo, step)]);
    if (r.code !== 0) throw new Error(`node ${step} failed:\n${r.output}`);
  }
  const still = staleBuild();
  if (still) throw new Error(`dist/ is still out of date after the build: ${still}`);
  log(`built dist/ in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
