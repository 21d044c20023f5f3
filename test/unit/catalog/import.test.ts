import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importOperatorsDir } from '../../../src/catalog/import.js';
import { validateCatalog } from '../../../src/catalog/validate.js';

const fixtures = join(import.meta.dirname, '../../fixtures/package-manifests');
const channel = (cfg: Awaited<ReturnType<typeof importOperatorsDir>>['config'], pkg: string, name: string) =>
  cfg.channels.find((c) => c.package === pkg && c.name === name)?.entries;

describe('importOperatorsDir', () => {
  it('imports both layouts, honouring ci.yaml semver-mode', async () => {
    const progress: [number, number][] = [];
    const r = await importOperatorsDir(join(fixtures, 'community'), {
      onProgress: (d, t) => progress.push([d, t]),
    });
    expect(r.errors).toEqual([]);
    expect([r.packages, r.bundles]).toEqual([2, 7]);
    expect(progress.at(0)).toEqual([0, 2]);
    expect(progress.at(-1)).toEqual([2, 2]);
    expect(validateCatalog(r.config).errors).toEqual([]);

    // Legacy: channels hold what the head reaches through replaces and skips, in version order.
    expect(channel(r.config, 'gadget', 'stable')).toEqual([
      { name: 'gadget.v1.0.0' },
      { name: 'gadget.v1.0.1', replaces: 'gadget.v1.0.0' },
      { name: 'gadget.v1.1.0', replaces: 'gadget.v1.0.0', skips: ['gadget.v1.0.1'] },
    ]);
    expect(channel(r.config, 'gadget', 'beta')?.map((e) => e.name)).toEqual([
      'gadget.v1.0.0',
      'gadget.v1.0.1',
      'gadget.v1.1.0',
      'gadget.v1.2.0-beta.1',
    ]);
    expect(r.config.packages.find((p) => p.name === 'gadget')).toMatchObject({
      defaultChannel: 'stable',
      description: 'A fixture operator.',
      icon: { mediatype: 'image/svg+xml' },
    });

    // Bundle layout in semver-mode: each version replaces the next lower one.
    expect(channel(r.config, 'doohickey', 'alpha')).toEqual([
      { name: 'doohickey.v0.1.0' },
      { name: 'doohickey.v0.2.0', replaces: 'doohickey.v0.1.0' },
      { name: 'doohickey.v0.3.0', replaces: 'doohickey.v0.2.0' },
    ]);
  });

  it('keeps going past a bad package and names the defect’s file and field', async () => {
    const r = await importOperatorsDir(join(fixtures, 'with-defect'));
    expect(r.errors).toEqual([
      {
        file: join(fixtures, 'with-defect/headless/headless.package.yaml'),
        object: 'package headless',
        field: 'channels[1].currentCSV',
        message: 'headless.v0.9.0 is not a CSV of package headless; channel legacy was left out',
      },
    ]);
    expect(r.results.map((x) => [x.name, x.errors.length])).toEqual([
      ['headless', 1],
      ['widgetry', 0],
    ]);
    expect(r.config.packages.map((p) => [p.name, p.defaultChannel])).toEqual([
      ['headless', 'stable'],
      ['widgetry', 'alpha'],
    ]);
    expect(channel(r.config, 'widgetry', 'alpha')?.at(-1)).toEqual({
      name: 'widgetry.v0.2.0',
      replaces: 'widgetry.v0.1.0',
      skipRange: '>=0.0.1 <0.2.0',
    });
  });
});

// The real-data check: every package OperatorHub published in July 2021.
const corpus = process.env.BOSUN_CORPUS_DIR;
const haveCorpus = !!corpus && existsSync(corpus);
if (!haveCorpus) {
  console.warn(
    'skipping the OperatorHub corpus import: set BOSUN_CORPUS_DIR to shared/corpus/operatorhub-2021/upstream-community-operators',
  );
}

describe.skipIf(!haveCorpus)('importing the OperatorHub 2021 corpus (BOSUN_CORPUS_DIR)', () => {
  it(
    'imports all 193 packages and 1006 of 1008 bundles; hive-operator’s missing heads and strimzi’s malformed image references are the only errors',
    {
      timeout: 600_000,
    },
    async () => {
      const r = await importOperatorsDir(corpus!);
      expect(r.packages).toBe(193);
      // strimzi 0.20.0 and 0.20.1 relate a reference opm cannot parse, so they (and the channel
      // whose head is 0.20.1) are left out, with errors naming the field.
      expect(r.bundles).toBe(1006);
      expect(r.errors).toEqual([
        expect.objectContaining({
          object: 'package hive-operator',
          field: 'channels[1].currentCSV',
          message: expect.stringContaining(
            'hive-operator.v1.0.3-7-gba4793f is not a CSV of package hive-operator',
          ),
        }),
        expect.objectContaining({
          object: 'package hive-operator',
          field: 'channels[2].currentCSV',
          message: expect.stringContaining('hive-operator.v1.0.5 is not a CSV of package hive-operator'),
        }),
        ...['0.20.0', '0.20.1'].map((v) =>
          expect.objectContaining({
            object: `ClusterServiceVersion/strimzi-cluster-operator.v${v}`,
            field: 'spec.relatedImages[0].image',
            message: expect.stringContaining('@@sha256:'),
          }),
        ),
        expect.objectContaining({
          object: 'package strimzi-kafka-operator',
          field: 'channels[2].currentCSV',
          message: expect.stringContaining('channel strimzi-0.20.x was left out'),
        }),
      ]);
      expect(r.errors[0]!.file).toMatch(/hive-operator\/hive\.package\.yaml$/);
      expect(r.results.filter((p) => p.errors.length).map((p) => p.name)).toEqual([
        'hive-operator',
        'strimzi-kafka-operator',
      ]);
      expect(validateCatalog(r.config)).toEqual({ errors: [], warnings: [] });
    },
  );
});
