/**
 * The image entrypoint test lays out what the Dockerfile says; these show it reads the real
 * Dockerfile as the image it builds, and refuses, naming the line, every change it could not
 * reproduce (so such a change fails that test instead of passing untested).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { admitted, parseDockerignore, runtimeImage } from '../../support/dockerfile.js';

const repo = join(import.meta.dirname, '../../..');
const dockerfile = await readFile(join(repo, 'Dockerfile'), 'utf8');

/** The Dockerfile with the runtime stage's line starting `instruction` replaced (or removed). */
function changed(instruction: string, replacement: string): string {
  const lines = dockerfile.split('\n');
  const runtime = lines.findLastIndex((l) => l.startsWith('FROM '));
  const i = lines.findIndex((l, n) => n >= runtime && l.startsWith(instruction));
  expect(i, `the runtime stage has a line starting ${instruction}`).toBeGreaterThan(0);
  lines[i] = replacement;
  return lines.join('\n');
}

describe('runtimeImage', () => {
  it('reads the repository’s Dockerfile as the image it builds', () => {
    const r = runtimeImage(dockerfile);
    expect(r.ok ? [] : r.errors).toEqual([]);
    if (!r.ok) return;
    expect(r.value).toMatchObject({
      installPrefix: '/opt/bosun',
      copies: [{ src: '/opt/bosun', dest: '/opt/bosun' }],
      user: { uid: 65532, gid: 65532 },
      env: { NODE_ENV: 'production', MALLOC_MMAP_THRESHOLD_: '131072', TMPDIR: '/tmp' },
      volumes: ['/tmp'],
      workdir: '/',
      expose: [8080],
      entrypoint: ['/opt/bosun/bin/bosun', 'operator', 'run'],
    });
    expect(r.value.base).toMatch(/^node:24\.\d+\.\d+-bookworm-slim$/);
  });

  it.each([
    [
      'a RUN in the runtime stage',
      'USER',
      'RUN chmod -R a+w /opt/bosun',
      /:\d+: RUN: the image entrypoint test does not reproduce RUN/,
    ],
    [
      'a file added from the context',
      'COPY',
      'ADD bin /opt/bosun/bin',
      /:\d+: ADD: the image entrypoint test does not reproduce ADD/,
    ],
    [
      'a COPY from the context',
      'COPY',
      'COPY bin /opt/bosun/bin',
      /:\d+: COPY bin \/opt\/bosun\/bin: the test lays out only/,
    ],
    [
      'a COPY of another build path',
      'COPY',
      'COPY --from=build /src/node_modules /opt/bosun',
      /copies \/src\/node_modules, which is not the production install/,
    ],
    [
      'a COPY with --chown',
      'COPY',
      'COPY --from=build --chown=65532:65532 /opt/bosun /opt/bosun',
      /the test lays out only/,
    ],
    ['a user by name', 'USER', 'USER node', /USER must be numeric uid:gid \(it is node\)/],
    ['no user', 'USER', '', /USER must be numeric uid:gid \(it is unset\)/],
    [
      'a shell-form entrypoint',
      'ENTRYPOINT',
      'ENTRYPOINT /opt/bosun/bin/bosun operator run',
      /:\d+: ENTRYPOINT: expected the exec form/,
    ],
    [
      'a quoted ENV value',
      'ENV',
      'ENV NODE_ENV="production" \\',
      /ENV: NODE_ENV="production": expected KEY=value/,
    ],
    ['a port that is not TCP', 'EXPOSE', 'EXPOSE 8080/udp', /EXPOSE 8080\/udp: expected a TCP port/],
  ])('refuses %s, naming the line', (_what, instruction, replacement, error) => {
    const r = runtimeImage(changed(instruction, replacement));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join('\n')).toMatch(error);
  });

  it('refuses a build stage that does not make the production install by npm pack and npm install -g', () => {
    const r = runtimeImage(dockerfile.replace('npm pack --pack-destination', 'npm run build && mkdir -p'));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.join('\n')).toMatch(/must make the production install: `npm pack`/);
  });
});

describe('parseDockerignore', () => {
  it('admits what the allow-list names and nothing else', async () => {
    const r = parseDockerignore(await readFile(join(repo, '.dockerignore'), 'utf8'));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    const table: [string, boolean][] = [
      ['package.json', true],
      ['src/cli/main.ts', true],
      ['tools/node/package.json', true],
      ['tools/controlplane/recipes.json', true],
      ['tools/opm/go.mod', false],
      ['node_modules/pino/package.json', false],
      ['dist/cli/main.js', false],
      ['test/unit/deploy/dockerfile.test.ts', false],
      ['test-results/x.json', false],
      ['.git/HEAD', false],
      ['srcx/file', false],
      ['README.md', true],
      ['eslint.config.js', false],
      ['vitest.config.ts', false],
    ];
    expect(table.map(([p]) => [p, admitted(r.value, p)])).toEqual(table);
  });

  it('refuses a pattern it cannot match exactly, naming the line', () => {
    const r = parseDockerignore('*\n!src\n**/*.log\n');
    expect(r).toEqual({
      ok: false,
      errors: ['.dockerignore:3: **/*.log: the test reads only `*` and plain paths'],
    });
  });
});
