/**
 * Validation (`bosun catalog validate`) and resolution (the resolver's predicates) read a range
 * the same way: both refuse what the kernel refuses, and a range the validator accepts holds,
 * in the resolver, exactly the versions the kernel's range holds. Before the kernel they used two
 * libraries and disagreed (`>=1.0.0 !=1.0.5` held 1.0.5 in the resolver; `^1.2.0` was refused by
 * validation only).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type DeclarativeConfig, emptyConfig } from '../../../src/apis/fbc.js';
import { validateCatalog } from '../../../src/catalog/validate.js';
import { parseRange, parseVersion } from '../../../src/olm/version.js';
import { readBundle } from '../../../src/resolver/bundle.js';
import { indexCatalog } from '../../../src/resolver/catalog-index.js';
import { packageRequirement } from '../../../src/resolver/constraint.js';
import { successorOf } from '../../../src/resolver/predicates.js';
import { runs } from '../../support/properties.js';
import { bundleDoc, channelDoc, pkgDoc } from '../catalog/docs.js';
import { anyVersion, noiseRange, structuredRange } from './generators.js';

/** A catalog whose app.v2.0.0 has `range` both as its skipRange and as a versionRange of lib. */
function catalogWith(range: string): DeclarativeConfig {
  const cfg = emptyConfig();
  cfg.packages.push(pkgDoc('app', 'stable'), pkgDoc('lib', 'stable'));
  cfg.channels.push(
    channelDoc('app', 'stable', [
      { name: 'app.v1.0.0' },
      { name: 'app.v2.0.0', replaces: 'app.v1.0.0', skipRange: range },
    ]),
    channelDoc('lib', 'stable', [{ name: 'lib.v1.0.0' }]),
  );
  cfg.bundles.push(
    bundleDoc('app', '1.0.0'),
    bundleDoc('app', '2.0.0', [
      { type: 'olm.package.required', value: { packageName: 'lib', versionRange: range } },
    ]),
    bundleDoc('lib', '1.0.0'),
  );
  return cfg;
}

const libAt = (version: string) =>
  readBundle({
    name: `lib.v${version}`,
    package: 'lib',
    properties: [{ type: 'olm.package', value: { packageName: 'lib', version } }],
  });

/** What each side makes of `range`, and of each version against it. */
function readings(range: string, versions: string[]) {
  const { errors } = validateCatalog(catalogWith(range));
  const validation = {
    skipRange: !errors.some((e) => e.field?.endsWith('.skipRange')),
    versionRange: !errors.some((e) => e.field?.endsWith('.versionRange')),
  };
  const index = indexCatalog({ name: 'c', namespace: 'ns', priority: 0, config: catalogWith(range) });
  const entry = index.channelEntries.get('app')!.get('stable')![0]!;
  const requirement = packageRequirement({ packageName: 'lib', versionRange: range });
  const resolution = { skipRange: entry.skipRange !== null, versionRange: requirement.problem === undefined };
  const kernel = parseRange(range);
  const members = versions
    .filter((v) => parseVersion(v) !== undefined)
    .map((v) => ({
      version: v,
      kernel: kernel.ok && kernel.range.test(v),
      required: requirement.test(libAt(v)),
      upgradesFrom: successorOf({ name: 'other', version: parseVersion(v)! })(entry),
    }));
  return { validation, resolution, kernel: kernel.ok, members };
}

describe('validation and resolution agree on every range', () => {
  it.each<[string, boolean, string[], string[]]>([
    // range, accepted, versions in it, versions not in it
    ['>=1.0.0 !=1.0.5', true, ['1.0.0', '1.0.6', '2.0.0-rc.1'], ['1.0.5', '0.9.0']],
    ['^1.2.0', false, [], []],
    ['~1.2.3', false, [], []],
    ['1.0', false, [], []],
    ['v1.0.0', false, [], []],
    ['1.X', false, [], []],
    ['1.0.0||2.0.0', false, [], []],
    ['1.0.0 || 2.0.0', true, ['1.0.0', '2.0.0'], ['1.5.0']],
    ['! 1.0.0', true, ['1.0.0'], ['1.0.1']],
    ['!=1.x', true, [], ['0.9.0', '1.0.0', '2.0.0']],
    ['>=1.0.0 <2.0.0', true, ['1.0.0', '1.9.9', '2.0.0-rc.1'], ['2.0.0', '0.9.9']],
    ['1.2.x', true, ['1.2.0', '1.2.99'], ['1.3.0', '1.1.9']],
  ])('%j: accepted %s', (range, accepted, inside, outside) => {
    const r = readings(range, [...inside, ...outside]);
    expect(r.validation).toEqual({ skipRange: accepted, versionRange: accepted });
    expect(r.resolution).toEqual({ skipRange: accepted, versionRange: accepted });
    for (const m of r.members) {
      const want = inside.includes(m.version);
      expect(m, `${m.version} in ${range}`).toEqual({
        version: m.version,
        kernel: want,
        required: want,
        upgradesFrom: want,
      });
    }
  });

  it('a refused skipRange is reported by the resolver, named by channel and entry', () => {
    const index = indexCatalog({ name: 'c', namespace: 'ns', priority: 0, config: catalogWith('^1.2.0') });
    expect(index.problems).toContainEqual({
      object: 'olm.channel stable',
      field: 'entries[app.v2.0.0].skipRange',
      message:
        '"^1.2.0": "^" is not a comparison (use =, !=, >, >=, <, <= or none for =) in range "^1.2.0"; ignoring it',
    });
  });

  it('holds for generated ranges', () => {
    fc.assert(
      fc.property(
        fc.oneof(structuredRange, noiseRange),
        fc.array(anyVersion, { minLength: 1, maxLength: 8 }),
        (range, versions) => {
          const r = readings(range, versions);
          const accepted = { skipRange: r.kernel, versionRange: r.kernel };
          expect(r.validation, range).toEqual(accepted);
          expect(r.resolution, range).toEqual(accepted);
          for (const m of r.members) {
            expect(m.required, `${m.version} in ${range}`).toBe(m.kernel);
            expect(m.upgradesFrom, `${m.version} in ${range}`).toBe(m.kernel);
          }
        },
      ),
      runs(500),
    );
  });
});

describe('the resolver reads bundle versions strictly, as validation and opm do', () => {
  it.each([
    ['1.0.0', true],
    ['1.0.0-rc.1+build.5', true],
    ['v1.0.0', false],
    ['=1.0.0', false],
    ['1.0', false],
    ['01.0.0', false],
  ])('%s usable: %s', (version, usable) => {
    expect(libAt(version).problems.length === 0).toBe(usable);
    const cfg = emptyConfig();
    cfg.packages.push(pkgDoc('lib', 'stable'));
    cfg.channels.push(channelDoc('lib', 'stable', [{ name: `lib.v${version}` }]));
    cfg.bundles.push(bundleDoc('lib', version));
    const { errors } = validateCatalog(cfg);
    expect(errors.some((e) => e.field?.endsWith('value.version'))).toBe(!usable);
  });
});
