/**
 * `bosun resolve` and `bosun explain`, run in-process on real FBC catalog directories and
 * Subscription files (test/fixtures/resolver), from a temporary working directory.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../../src/cli/main.js';
import { capture } from '../../support/capture.js';

const fixtures = join(process.cwd(), 'test/fixtures/resolver');
const community = `--catalog=${join(fixtures, 'catalogs/community')}`;
const certified = `--catalog=${join(fixtures, 'catalogs/certified')}`;
const subscription = (name: string) => `--subscription=${join(fixtures, 'subscriptions', `${name}.yaml`)}`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bosun-resolve-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function bosun(...args: string[]) {
  const c = capture(process.env, dir);
  const code = await main(args, c.ctx);
  return { code, stdout: c.stdout, stderr: c.stderr };
}

describe('bosun resolve', () => {
  it('prints the plan, dependencies first, upgrading what is installed', async () => {
    const r = await bosun(
      'resolve',
      community,
      subscription('vault'),
      subscription('etcd'),
      `--installed=${join(fixtures, 'installed.yaml')}`,
    );
    expect(r).toEqual({
      code: 0,
      stdout:
        'upgrade etcdoperator.v0.9.2 to etcdoperator.v0.9.4 (0.9.4) from channel singlenamespace-alpha of catalog community, for subscription etcd\n' +
        'install vault.v1.0.0 (1.0.0) from channel stable of catalog community, for subscription vault\n',
      stderr: '',
    });
  });

  it('prints JSON with the install list; a dependency comes from the Subscription’s own catalog first', async () => {
    const r = await bosun('resolve', community, certified, subscription('app'), '--output', 'json');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      ok: true,
      install: [
        {
          package: 'vault',
          bundle: 'vault.v1.1.0',
          version: '1.1.0',
          catalog: 'certified',
          channel: 'stable',
          replaces: null,
          reason: 'dependency',
        },
        {
          package: 'app',
          bundle: 'app.v2.0.0',
          version: '2.0.0',
          catalog: 'certified',
          channel: 'stable',
          replaces: null,
          reason: 'subscription',
        },
      ],
    });
  });

  it('names a catalog by NAME=DIR, and a catalog with an installed operator stays put when nothing is newer', async () => {
    await writeFile(join(dir, 'installed.yaml'), '- {name: vault.v1.1.0, catalog: certified}\n');
    await writeFile(
      join(dir, 'sub.yaml'),
      'kind: Subscription\nmetadata: {name: v, namespace: ops}\nspec: {name: vault, source: certified, sourceNamespace: olm}\n',
    );
    const r = await bosun(
      'resolve',
      `--catalog=certified=${join(fixtures, 'catalogs/certified')}`,
      '--subscription=sub.yaml',
      '--installed=installed.yaml',
    );
    expect(r).toEqual({ code: 0, stdout: 'Nothing to install or upgrade.\n', stderr: '' });
  });

  it('exits 1 with the message and the explanation as JSON when there is no answer', async () => {
    const r = await bosun('resolve', community, subscription('cluster-backup'), '-o', 'json');
    expect(r.code).toBe(1);
    const out = JSON.parse(r.stdout);
    expect(out.ok).toBe(false);
    expect(out.message).toBe(
      'subscription cluster-backup: cluster-backup.v0.3.0 requires a provider of backup.example.com/v1 BackupStorage; ' +
        'none of 1 catalog has one in a channel the namespace can use',
    );
    expect(out.explanation.failure.candidates[0]).toMatchObject({
      candidate: { bundle: 'cluster-backup.v0.3.0', catalog: 'community', channel: 'alpha' },
      ruledOut: { kind: 'Unsatisfiable' },
    });
    expect(out.explanation.conflict.map((c: { kind: string }) => c.kind)).toEqual([
      'subscription',
      'requirement',
    ]);
  });

  it.each([
    [['resolve', subscription('vault')], 'give at least one --catalog [NAME=]DIR'],
    [['resolve', community], 'give at least one --subscription FILE'],
    [['resolve', community, subscription('vault'), '-o', 'yaml'], '--output yaml: expected text or json'],
    [
      ['resolve', community, subscription('vault'), '--priority', 'community=high'],
      '--priority community=high: expected NAME=N',
    ],
    [
      ['resolve', community, subscription('vault'), '--priority', 'nope=1'],
      '--priority nope: no --catalog is named nope',
    ],
  ])('rejects %j with exit 2', async (args, message) => {
    const r = await bosun(...args);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
  });

  it('names the file and field of an installed CSV the catalog does not have', async () => {
    await writeFile(
      join(dir, 'installed.yaml'),
      '- {name: etcdoperator.v0.9.2, catalog: community}\n- {name: etcd.v9, catalog: community}\n',
    );
    const r = await bosun('resolve', community, subscription('etcd'), '--installed=installed.yaml');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `error: ${join(dir, 'installed.yaml')}: [1].name: etcd.v9 is not a bundle of catalog community\n`,
    );
  });

  it('refuses a catalog the manager (and opm) would refuse, naming the file, object and field', async () => {
    const catalog = join(dir, 'catalog');
    await mkdir(catalog);
    const etcd = await readFile(join(fixtures, 'catalogs/community/etcd.yaml'), 'utf8');
    const [first, ...rest] = etcd.split(/^image: .*$/m);
    await writeFile(join(catalog, 'etcd.yaml'), [first, 'image: quay.io/coreos/Etcd:v1', ...rest].join(''));
    const r = await bosun('resolve', `--catalog=${catalog}`, subscription('etcd'));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`catalog catalog (${catalog}) does not load:`);
    expect(r.stderr).toMatch(
      /etcd\.yaml: bundle \S+: image: "quay.io\/coreos\/Etcd:v1" is not a valid image reference/,
    );
  });

  it('names the file of a document that is not a Subscription, and Subscriptions in different namespaces', async () => {
    await writeFile(join(dir, 'csv.yaml'), 'kind: ClusterServiceVersion\nmetadata: {name: x}\n');
    const wrongKind = await bosun('resolve', community, '--subscription=csv.yaml');
    expect(wrongKind.stderr).toBe(
      `error: ${join(dir, 'csv.yaml')}: kind: is "ClusterServiceVersion", expected Subscription\n`,
    );

    await writeFile(
      join(dir, 'other.yaml'),
      'kind: Subscription\nmetadata: {name: e, namespace: elsewhere}\nspec: {name: etcd, source: community}\n',
    );
    const split = await bosun('resolve', community, subscription('vault'), '--subscription=other.yaml');
    expect(split.code).toBe(1);
    expect(split.stderr).toContain('Subscriptions resolve together in one namespace');
  });

  it('reads several Subscriptions from one multi-document file', async () => {
    await writeFile(
      join(dir, 'subs.yaml'),
      [
        'kind: Subscription\nmetadata: {name: a, namespace: ops}\nspec: {name: vault, source: community}',
        'kind: Subscription\nmetadata: {name: b, namespace: ops}\nspec: {name: etcd, source: community}',
      ].join('\n---\n'),
    );
    const r = await bosun('resolve', community, '--subscription=subs.yaml', '-o', 'json');
    expect(JSON.parse(r.stdout).install.map((s: { bundle: string }) => s.bundle)).toEqual([
      'etcdoperator.v0.9.4',
      'vault.v1.0.0',
    ]);
  });
});

describe('bosun explain', () => {
  it('explains a failure: every candidate, what ruled it out, and the conflicting constraints', async () => {
    const r = await bosun('explain', community, subscription('cluster-backup'));
    expect(r.code).toBe(1);
    expect(r.stdout).toBe(
      [
        'Cannot resolve: subscription cluster-backup: cluster-backup.v0.3.0 requires a provider of backup.example.com/v1 BackupStorage; none of 1 catalog has one in a channel the namespace can use',
        '',
        'What was tried:',
        '  subscription cluster-backup (package cluster-backup, channel alpha, catalog community)',
        '    - cluster-backup.v0.3.0 (0.3.0, channel alpha of catalog community): ruled out, a requirement cannot be met:',
        '        cluster-backup.v0.3.0 requires a provider of backup.example.com/v1 BackupStorage',
        '          no candidates: none of 1 catalog has one in a channel the namespace can use',
        '',
        'These constraints cannot all hold:',
        '  - subscription cluster-backup wants package cluster-backup from channel alpha of catalog community',
        '  - cluster-backup.v0.3.0 requires a provider of backup.example.com/v1 BackupStorage',
        '',
      ].join('\n'),
    );
  });

  it('explains a success: why this bundle, and what each requirement was met by', async () => {
    const r = await bosun(
      'explain',
      community,
      subscription('vault'),
      `--installed=${join(fixtures, 'installed.yaml')}`,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [
        'Resolved: 1 bundle to install or upgrade.',
        '  vault.v1.0.0 (1.0.0) from channel stable of catalog community for subscription vault',
        '',
        'Why:',
        'subscription vault (package vault, channel stable, catalog community): gets vault.v1.0.0 (1.0.0, channel stable of catalog community)',
        'vault.v1.0.0 requires a provider of etcd.database.coreos.com/v1beta2 EtcdCluster: met by installed etcdoperator.v0.9.2',
        '',
      ].join('\n'),
    );
  });

  it('prints the whole result as JSON with --output json', async () => {
    const r = await bosun('explain', community, subscription('vault'), '-o', 'json');
    const out = JSON.parse(r.stdout);
    expect(out.ok).toBe(true);
    expect(out.explanation.dependencies[0]).toMatchObject({
      requiredBy: { bundle: 'vault.v1.0.0' },
      chosen: { bundle: 'etcdoperator.v0.9.4', channel: 'singlenamespace-alpha' },
    });
  });
});
