import { execFile, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { runBosun } from './run-bosun.js';

const run = promisify(execFile);

const bosun = (args: string[]) => runBosun(args);

describe('the bosun command shell', () => {
  it('prints its version from package.json', async () => {
    const { version } = JSON.parse(await readFile('package.json', 'utf8'));
    expect(await bosun(['--version'])).toEqual({ code: 0, stdout: `bosun ${version}\n`, stderr: '' });
  });

  it('lists every command group in --help', async () => {
    const { code, stdout } = await bosun(['--help']);
    expect(code).toBe(0);
    const listed = [...stdout.matchAll(/^ {2}([a-z]+) {2,}\S/gm)].map((m) => m[1]);
    expect(listed).toEqual([
      'start',
      'catalog',
      'bundle',
      'cluster',
      'operator',
      'resolve',
      'explain',
      'plan',
      'rollback',
      'upgrade',
      'migrate',
    ]);
  });

  it('shows the help of a group and of a leaf command', async () => {
    const group = await bosun(['cluster', '--help']);
    expect(group.stdout).toMatch(/Usage:\n {2}bosun cluster <command>/);
    expect(group.stdout).toMatch(/^ {2}up\s+/m);
    const leaf = await bosun(['cluster', 'up', '--help']);
    expect(leaf.stdout).toContain('--port PORT');
    expect(leaf.code).toBe(0);
  });

  it.each([
    [['frobnicate'], 'unknown command "frobnicate" for "bosun"'],
    [['cluster', 'sideways'], 'unknown command "sideways" for "bosun cluster"'],
    [['--frob'], "Unknown option '--frob'"],
    [['cluster', 'status', '--frob'], "bosun cluster status: Unknown option '--frob'"],
    [['cluster', 'status', 'extra'], 'bosun cluster status: unexpected argument "extra"'],
    [['cluster', 'up', '--port', 'http'], '--port: "http" is not a port number'],
  ])('rejects %j with a clear message and exit 2', async (args, message) => {
    const { code, stderr, stdout } = await bosun(args);
    expect(code).toBe(2);
    expect(stderr).toContain(message);
    expect(stdout).toBe('');
  });

  it('runs as the installed bin from the compiled JavaScript (npx bosun)', async () => {
    const { stdout } = await run(process.execPath, ['bin/bosun.js', '--version']);
    expect(stdout).toMatch(/^bosun \d+\.\d+\.\d+\n$/);
    const bad = await run(process.execPath, ['bin/bosun.js', 'nope']).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(bad?.code).toBe(2);
    expect(bad?.stderr).toContain('unknown command "nope"');
  });

  it('stops quietly when the reader of its output goes away (bosun catalog render | head -1)', async () => {
    const child = spawn(process.execPath, ['bin/bosun.js', 'catalog', 'render', 'catalogs/bosun-samples'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // Read the first chunk, then close the pipe as `head` does.
    await new Promise((r) => child.stdout.once('data', r));
    child.stdout.destroy();
    const code = await new Promise((r) => child.once('exit', r));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
