/**
 * Bosun's CRDs against OLM's published ones (github.com/operator-framework/api, fetched through
 * the Go module proxy; see test/support/olm-crds.ts), schema against schema: every declared field,
 * type, required list, enum, default, format, bound, pattern, list/map type, CEL rule and
 * preserve-unknown-fields flag, and the names, versions, printer columns and subresources. A
 * difference passes only as one of the named allowances, which the README lists.
 */
import { describe, expect, it } from 'vitest';
import { compareCrds, type CrdDifference, type CrdShape } from '../../../src/apis/crds/compare.js';
import { crdDefinitions, renderCrd } from '../../../src/apis/crds/index.js';
import { OperatorsGroup, type OperatorsKind } from '../../../src/apis/operators.js';
import { allows, crdAllowances, loadOlmCrds, OlmApiModule, OlmApiVersion } from '../../support/olm-crds.js';

const olm = await loadOlmCrds();
if (!olm.ok) console.warn(`skipping the comparison with OLM's CRDs: ${olm.reason}`);

// OLM v0's kinds only: OLM v1's are compared with operator-controller's (olmv1-crd-parity.test.ts).
const v0Definitions = crdDefinitions.filter((d) => d.resource.group === OperatorsGroup);
const kinds = v0Definitions.map((d) => d.resource.kind as OperatorsKind);
const differences = (kind: OperatorsKind): CrdDifference[] => {
  if (!olm.ok) throw new Error('unreachable: the suite is skipped without OLM’s CRDs');
  const def = v0Definitions.find((d) => d.resource.kind === kind)!;
  return compareCrds(renderCrd(def) as unknown as CrdShape, olm.crds[kind]);
};
const show = (kind: string, d: CrdDifference) =>
  `${kind} ${d.version ?? ''} ${d.path} ${d.aspect}: Bosun ${JSON.stringify(d.ours)}, OLM ${JSON.stringify(d.theirs)}`;

describe.skipIf(!olm.ok)(`Bosun's CRDs against OLM's (${OlmApiModule}@${OlmApiVersion})`, () => {
  it.each(kinds)('%s differs from OLM’s only where an allowance says so', (kind) => {
    const unexplained = differences(kind)
      .filter((d) => crdAllowances.filter((a) => allows(a, kind, d)).length !== 1)
      .map((d) => show(kind, d));
    expect(unexplained).toEqual([]);
  });

  it('every allowance still matches a difference', () => {
    const used = new Set<string>();
    for (const kind of kinds) {
      for (const d of differences(kind)) {
        for (const a of crdAllowances) if (allows(a, kind, d)) used.add(a.name);
      }
    }
    expect(crdAllowances.map((a) => a.name).filter((n) => !used.has(n))).toEqual([]);
  });

  it('the allowed differences are these, and no others', () => {
    const all = kinds.flatMap((kind) =>
      differences(kind).map((d) => `${kind} ${d.version} ${d.path} ${d.aspect}`),
    );
    expect(all).toEqual([
      'CatalogSource v1alpha1 .status preserveUnknownFields',
      'Subscription v1alpha1 .spec.installPlanApproval enum',
      'Subscription v1alpha1 .status preserveUnknownFields',
      'Subscription v1alpha1 .status.heldBack field',
      'Subscription v1alpha1 .status.history field',
      'Subscription v1alpha1 .status.rollback field',
      'InstallPlan v1alpha1 .spec.approval enum',
      'InstallPlan v1alpha1 .status preserveUnknownFields',
      'InstallPlan v1alpha1 .status.summary field',
      'ClusterServiceVersion v1alpha1 .spec.release validations',
      'ClusterServiceVersion v1alpha1 .status preserveUnknownFields',
      'OperatorGroup v1 .status preserveUnknownFields',
      'OperatorGroup v1alpha2 .status preserveUnknownFields',
      'OperatorCondition v1 .status preserveUnknownFields',
      'OperatorCondition v2 .status preserveUnknownFields',
      'Operator v1 .status preserveUnknownFields',
    ]);
  });

  it('serves the same versions as OLM, storing the same one', () => {
    if (!olm.ok) return;
    for (const def of v0Definitions) {
      const kind = def.resource.kind as OperatorsKind;
      const versions = (crd: CrdShape) =>
        crd.spec.versions.map((v) => `${v.name}${v.storage ? ' (stored)' : ''}`).sort();
      expect(versions(renderCrd(def) as unknown as CrdShape), kind).toEqual(versions(olm.crds[kind]));
    }
  });
});
