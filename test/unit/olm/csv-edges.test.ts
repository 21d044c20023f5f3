import { describe, expect, it } from 'vitest';
import type { KubeManifest } from '../../../src/apis/bundle.js';
import { csvEdgeProblems, csvEdges, hasEdges, upgradesFrom } from '../../../src/olm/csv-edges.js';

const csv = (spec: Record<string, unknown>, annotations: Record<string, unknown> = {}): KubeManifest => ({
  apiVersion: 'operators.coreos.com/v1alpha1',
  kind: 'ClusterServiceVersion',
  metadata: { name: 'app.v2.0.0', annotations },
  spec,
});

describe('a CSV’s upgrade edges', () => {
  it.each<[string, KubeManifest, object]>([
    ['none', csv({}), { name: 'app.v2.0.0' }],
    [
      'replaces, skips and olm.skipRange',
      csv({ replaces: 'app.v1.0.0', skips: ['app.v1.1.0', 7] }, { 'olm.skipRange': '>=1.0.0 <2.0.0' }),
      { name: 'app.v2.0.0', replaces: 'app.v1.0.0', skips: ['app.v1.1.0'], skipRange: '>=1.0.0 <2.0.0' },
    ],
    [
      'empty values are no edges',
      csv({ replaces: '', skips: [] }, { 'olm.skipRange': '' }),
      { name: 'app.v2.0.0' },
    ],
  ])('%s', (_, manifest, want) => {
    const e = csvEdges('app.v2.0.0', manifest);
    expect(e).toEqual(want);
    expect(hasEdges(e)).toBe(Object.keys(want).length > 1);
  });

  it.each<[string, KubeManifest, { field: string; message: string }[]]>([
    [
      'valid edges',
      csv({ replaces: 'app.v1.0.0', skips: ['app.v1.1.0'] }, { 'olm.skipRange': '<2.0.0' }),
      [],
    ],
    [
      'replaces itself',
      csv({ replaces: 'app.v2.0.0' }),
      [{ field: 'spec.replaces', message: 'a CSV cannot replace itself' }],
    ],
    [
      'replaces is no string',
      csv({ replaces: 3 }),
      [{ field: 'spec.replaces', message: 'must be a string (a CSV name)' }],
    ],
    [
      'skips itself and a number',
      csv({ skips: ['app.v2.0.0', 1] }),
      [
        { field: 'spec.skips[0]', message: 'a CSV cannot skip itself' },
        { field: 'spec.skips[1]', message: 'must be a CSV name' },
      ],
    ],
    [
      'a skipRange OLM refuses',
      csv({}, { 'olm.skipRange': '^1.2.0' }),
      [
        {
          field: 'metadata.annotations.olm.skipRange',
          message:
            '"^1.2.0": "^" is not a comparison (use =, !=, >, >=, <, <= or none for =) in range "^1.2.0"',
        },
      ],
    ],
  ])('problems: %s', (_, manifest, want) => {
    expect(csvEdgeProblems(manifest, 'app.v2.0.0')).toEqual(want);
  });
});

describe('upgradesFrom', () => {
  const csv = (spec: object, annotations: Record<string, string> = {}): KubeManifest => ({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name: 'foo.v3.0.0', annotations },
    spec,
  });

  it('by replaces, by skips, and by a skipRange that holds the installed version', () => {
    expect(upgradesFrom(csv({ replaces: 'foo.v2.0.0' }), { name: 'foo.v2.0.0' })).toBe(true);
    expect(upgradesFrom(csv({ skips: ['foo.v1.0.0'] }), { name: 'foo.v1.0.0' })).toBe(true);
    const ranged = csv({}, { 'olm.skipRange': '>=1.0.0 <3.0.0' });
    expect(upgradesFrom(ranged, { name: 'foo.v1.5.0', version: '1.5.0' })).toBe(true);
    // Read leniently, as OLM reads an installed CSV's version.
    expect(upgradesFrom(ranged, { name: 'foo.v1.5', version: 'v1.5' })).toBe(true);
  });

  it('not from anything else', () => {
    const ranged = csv(
      { replaces: 'foo.v2.0.0', skips: ['foo.v1.0.0'] },
      { 'olm.skipRange': '>=1.0.0 <3.0.0' },
    );
    expect(upgradesFrom(ranged, { name: 'foo.v3.1.0', version: '3.1.0' })).toBe(false);
    expect(upgradesFrom(ranged, { name: 'foo.v0.9.0', version: '0.9.0' })).toBe(false);
    expect(upgradesFrom(ranged, { name: 'bar.v2.0.0' })).toBe(false);
    expect(upgradesFrom(csv({}, { 'olm.skipRange': 'not a range' }), { name: 'x', version: '1.0.0' })).toBe(
      false,
    );
  });
});
