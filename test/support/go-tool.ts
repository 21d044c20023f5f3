/**
 * Small Go programs under tools/ that answer questions with the libraries OLM and opm use
 * (blang/semver, distribution/reference), so tests can compare Bosun's rules with theirs. Each is
 * built once per source version into ~/.cache/bosun/tools (modules come from the Go module
 * proxy on first use) and then talks JSON lines: one request per line in, one answer per line out.
 * Where `go` is missing or the build fails, `goTool` says why, for the test to skip with.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';

const toolsDir = resolve(import.meta.dirname, '../../tools');

/** The built program of tools/<name>, or why it cannot be built here. */
export function goTool(name: string): { path: string } | { skip: string } {
  const source = join(toolsDir, name);
  const go = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (go.error || go.status !== 0) return { skip: `tools/${name} not built: \`go\` is not installed` };
  const hash = createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(source, f)));
  const dir = join(homedir(), '.cache', 'bosun', 'tools');
  const path = join(dir, `${name}-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(path)) return { path };
  mkdirSync(dir, { recursive: true });
  // Built to a temporary name and renamed, so a test run cut short never leaves half a binary.
  const partial = `${path}.${process.pid}.partial`;
  const build = spawnSync('go', ['build', '-o', partial, '.'], {
    cwd: source,
    encoding: 'utf8',
    env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' },
  });
  if (build.status !== 0) return { skip: `tools/${name} not built: go build failed: ${build.stderr.trim()}` };
  renameSync(partial, path);
  return { path };
}

/** A running tool: requests answered one by one, in order. */
export class GoTool<Request, Answer> {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting: ((a: Answer) => void)[] = [];

  constructor(path: string) {
    this.child = spawn(path, [], { stdio: 'pipe' });
    createInterface({ input: this.child.stdout }).on('line', (line) => {
      this.waiting.shift()?.(JSON.parse(line) as Answer);
    });
  }

  ask(req: Request): Promise<Answer> {
    return new Promise((done) => {
      this.waiting.push(done);
      this.child.stdin.write(`${JSON.stringify(req)}\n`);
    });
  }

  close(): void {
    this.child.stdin.end();
  }
}
