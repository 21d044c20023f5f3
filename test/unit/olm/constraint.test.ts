/**
 * `olm.constraint` parsed once by the kernel: validation reports its problems and the resolver
 * refuses the same values. Where validation and the resolver used to disagree, OLM decides:
 * `none` is no constraint kind in OLM (operator-framework/api decodes with unknown fields
 * disallowed), a CEL rule that does not compile or is not boolean is refused when validating too,
 * and a blank rule is no rule.
 */
import { describe, expect, it } from 'vitest';
import { constraintProblems, parseConstraint } from '../../../src/olm/constraint.js';
import { readBundle } from '../../../src/resolver/bundle.js';
import { constraintRequirement } from '../../../src/resolver/constraint.js';

const gvk = { group: 'g', version: 'v1', kind: 'K' };

describe('olm.constraint', () => {
  it.each<[string, unknown, { path: string; message: string }[]]>([
    ['a gvk', { gvk }, []],
    ['a package with a blang range', { package: { packageName: 'p', versionRange: '>=1.0.0 !=1.0.5' } }, []],
    ['a boolean CEL rule', { cel: { rule: 'properties.exists(p, p.type == "x")' } }, []],
    ['a failureMessage beside the kind', { failureMessage: 'needs K', gvk }, []],
    ['nested compounds', { all: { constraints: [{ gvk }, { not: { constraints: [{ gvk }] } }] } }, []],
    ['not a map', 'gvk', [{ path: '', message: 'an olm.constraint value is a map' }]],
    [
      'two kinds',
      { gvk, cel: { rule: 'true' } },
      [
        {
          path: '',
          message: 'an olm.constraint has exactly one of gvk, package, all, any, not, cel, found gvk, cel',
        },
      ],
    ],
    [
      'none, which OLM does not know',
      { none: { constraints: [{ gvk }] } },
      [
        {
          path: '.none',
          message: 'unknown field: OLM knows only failureMessage, gvk, package, all, any, not, cel here',
        },
      ],
    ],
    [
      'a misspelt field inside a kind',
      { package: { packageName: 'p', versionrange: '>=1.0.0' } },
      [
        {
          path: '.package.versionrange',
          message: 'unknown field: OLM knows only packageName, versionRange here',
        },
      ],
    ],
    [
      'an unknown field deep in a compound',
      { all: { constraints: [{ gvk: { ...gvk, plural: 'ks' } }] } },
      [
        {
          path: '.all.constraints[0].gvk.plural',
          message: 'unknown field: OLM knows only group, version, kind here',
        },
      ],
    ],
    [
      'a failureMessage that is not a string',
      { failureMessage: 7, gvk },
      [{ path: '.failureMessage', message: 'is a string' }],
    ],
    [
      'a value larger than OLM takes (128 KiB of JSON)',
      { failureMessage: 'x'.repeat(2 << 16), gvk },
      [
        {
          path: '',
          message: `an olm.constraint value is at most 131072 bytes of JSON, found ${(2 << 16) + 67}`,
        },
      ],
    ],
    [
      'a gvk without kind',
      { gvk: { group: 'g', version: 'v1' } },
      [{ path: '.gvk', message: 'an olm.gvk value needs group, version and kind' }],
    ],
    [
      'a range OLM refuses',
      { package: { packageName: 'p', versionRange: '^1.2.0' } },
      [
        {
          path: '.package.versionRange',
          message:
            '"^1.2.0": "^" is not a comparison (use =, !=, >, >=, <, <= or none for =) in range "^1.2.0"',
        },
      ],
    ],
    ['a blank CEL rule', { cel: { rule: '  ' } }, [{ path: '.cel.rule', message: 'is required' }]],
    [
      'a CEL rule that is not boolean',
      { cel: { rule: '1 + 2' } },
      [{ path: '.cel.rule', message: 'cel rule "1 + 2" must be boolean, not int' }],
    ],
    [
      'an empty compound and a bad part, both reported',
      { any: { constraints: [{ all: { constraints: [] } }, { gvk: {} }] } },
      [
        {
          path: '.any.constraints[0].all.constraints',
          message: 'is required: a non-empty list of constraints',
        },
        { path: '.any.constraints[1].gvk', message: 'an olm.gvk value needs group, version and kind' },
      ],
    ],
  ])('%s', (_, value, problems) => {
    expect(constraintProblems(value)).toEqual(problems);
    // The resolver refuses exactly what validation reports.
    const compiled = constraintRequirement(value);
    expect(compiled.problem).toBe(problems[0]?.message);
  });

  it('compiles each part once, into what the resolver tests bundles with', () => {
    const parsed = parseConstraint({
      all: { constraints: [{ gvk }, { package: { packageName: 'p', versionRange: '>=1.0.0 !=1.0.5' } }] },
    });
    expect(parsed.ok).toBe(true);
    const test = constraintRequirement({
      all: { constraints: [{ package: { packageName: 'p', versionRange: '>=1.0.0 !=1.0.5' } }] },
    }).test;
    const at = (version: string) =>
      readBundle({
        name: `p.v${version}`,
        package: 'p',
        properties: [{ type: 'olm.package', value: { packageName: 'p', version } }],
      });
    expect(['1.0.4', '1.0.5', '1.0.6'].map((v) => test(at(v)))).toEqual([true, false, true]);
  });
});
