import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const root = new URL('../../../', import.meta.url);
const pinned: string = JSON.parse(readFileSync(new URL('tools/node/package.json', root), 'utf8')).version;
const engines: string = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')).engines.node;

describe('the Node.js the tests run on', () => {
  it('is Node 24, the line package.json names', () => {
    expect(process.versions.node.split('.')[0]).toBe('24');
    expect(pinned.split('.')[0]).toBe('24');
    expect(engines).toMatch(/^>=24\./);
  });

  it('is the pinned build npm ci installed, where one exists for this platform', () => {
    const bin = new URL('node_modules/.bin/node', root);
    if (!existsSync(bin)) {
      console.warn(`no pinned Node for ${process.platform}-${process.arch}; running on ${process.version}`);
      return;
    }
    expect(process.version).toBe(`v${pinned}`);
    expect(realpathSync(process.execPath)).toBe(realpathSync(bin));
  });
});
