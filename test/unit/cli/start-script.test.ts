import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ManagerAllocatorEnv } from '../../../src/manager/defaults.js';

// The benchmarks start the manager with ManagerAllocatorEnv as the stand-in for `npm start`;
// the two must not drift apart.
describe('npm start', () => {
  it('starts the manager with the allocator setting the benchmarks measure', async () => {
    const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      scripts: Record<string, string>;
    };
    const start = pkg.scripts.start ?? '';
    const prefix = Object.entries(ManagerAllocatorEnv)
      .map(([k, v]) => `${k}=${v} `)
      .join('');
    expect(start).toBe(`${prefix}node bin/bosun.js start`);
  });
});
