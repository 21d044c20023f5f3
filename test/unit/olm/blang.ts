/**
 * blang/semver's own answers, from tools/blang-semver (a small Go program over the library OLM
 * uses). The program is built once per source version into ~/.cache/bosun/tools; building needs
 * `go` and the module github.com/blang/semver/v4@v4.0.0 in the Go module cache (no network: the
 * build runs with GOPROXY=off). When either is missing, `blangTool()` says why instead.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const SOURCE = resolve(import.meta.dirname, '../../../tools/blang-semver');

export interface BlangRequest {
  op: 'parse' | 'tolerant' | 'compare' | 'range';
  text?: string;
  a?: string;
  b?: string;
  versions?: string[];
}

export interface BlangAnswer {
  ok: boolean;
  error?: string;
  value?: string;
  cmp?: number;
  /** Per version: "true", "false", "panic" (blang's range function panicked) or "invalid". */
  tests?: string[];
}

/** The built tool's path, or why it cannot be built here. */
export function blangTool(): { path: string } | { skip: string } {
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error || go.status !== 0)
    return { skip: 'blang/semver differential tests skipped: `go` is not installed' };
  const hash = createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(SOURCE, f)));
  const dir = join(homedir(), '.cache', 'bosun', 'tools');
  const path = join(dir, `blang-semver-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(path)) return { path };
  mkdirSync(dir, { recursive: true });
  const build = spawnSync('go', ['build', '-o', path, '.'], {
    cwd: SOURCE,
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod', GOPROXY: 'off', GOTOOLCHAIN: 'local' },
  });
  if (build.status !== 0) {
    return {
      skip: `blang/semver differential tests skipped: building tools/blang-semver failed (is github.com/blang/semver/v4@v4.0.0 in the Go module cache?): ${build.stderr.trim()}`,
    };
  }
  return { path };
}

/** A running tool: one request, one answer, in order. */
export class Blang {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: ((a: BlangAnswer) => void)[] = [];

  constructor(path: string) {
    this.child = spawn(path, [], { stdio: 'pipe' });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.waiting.shift()?.(JSON.parse(line) as BlangAnswer);
    });
  }

  ask(req: BlangRequest): Promise<BlangAnswer> {
    return new Promise((done) => {
      this.waiting.push(done);
      this.child.stdin.write(`${JSON.stringify(req)}\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}
