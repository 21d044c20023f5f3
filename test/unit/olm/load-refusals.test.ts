/**
 * What opm's loader refuses, `bosun resolve` refuses too (it loads and validates each catalog as
 * the manager does), naming the file, package, channel and entry: a bundle in no channel, an
 * entry that replaces itself, a head that skips itself, a skipRange or bundle version blang does
 * not read.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { capture } from '../../support/capture.js';

const fixtures = join(process.cwd(), 'test/fixtures/resolver');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bosun-refusals-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function resolveWith(edit: (etcd: string) => string) {
  const catalog = join(dir, 'catalog');
  await mkdir(catalog);
  const etcd = await readFile(join(fixtures, 'catalogs/community/etcd.yaml'), 'utf8');
  const changed = edit(etcd);
  expect(changed).not.toBe(etcd);
  await writeFile(join(catalog, 'etcd.yaml'), changed);
  const c = capture(process.env, dir);
  const code = await main(
    ['resolve', `--catalog=${catalog}`, `--subscription=${join(fixtures, 'subscriptions/etcd.yaml')}`],
    c.ctx,
  );
  return { code, stderr: c.stderr, file: join(catalog, 'etcd.yaml') };
}

describe('bosun resolve refuses what opm’s loader refuses', () => {
  it.each<[string, (etcd: string) => string, string]>([
    [
      'a bundle in no channel',
      (s) =>
        s.replace('  - name: etcdoperator.v0.9.0\n', '').replace('    replaces: etcdoperator.v0.9.0\n', ''),
      'bundle etcdoperator.v0.9.0: bundle etcdoperator.v0.9.0 is in no channel of package etcd',
    ],
    [
      'an entry that replaces itself',
      (s) => s.replace('    replaces: etcdoperator.v0.9.0\n', '    replaces: etcdoperator.v0.9.2\n'),
      'channel etcd/singlenamespace-alpha: entries: replaces cycle: etcdoperator.v0.9.2 -> etcdoperator.v0.9.2',
    ],
    [
      // opm counts the edge: the head that skips itself is no head (a tail that skips itself
      // is merely skipped, which opm accepts).
      'a head that skips itself',
      (s) =>
        s.replace(
          'skipRange: ">=0.9.0 <0.9.4"',
          'skipRange: ">=0.9.0 <0.9.4"\n    skips: [etcdoperator.v0.9.4]',
        ),
      'channel etcd/singlenamespace-alpha: entries: no channel head',
    ],
    [
      'a skipRange blang does not read',
      (s) => s.replace('skipRange: ">=0.9.0 <0.9.4"', 'skipRange: "^0.9.0"'),
      'channel etcd/singlenamespace-alpha: entries[2].skipRange: "^0.9.0"',
    ],
    [
      'a bundle version blang does not read',
      (s) => s.replace('{packageName: etcd, version: 0.9.0}', '{packageName: etcd, version: v0.9.0}'),
      'bundle etcdoperator.v0.9.0: properties[0].value.version',
    ],
  ])('%s', async (_, edit, where) => {
    const r = await resolveWith(edit);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${r.file}: ${where}`);
  });
});
