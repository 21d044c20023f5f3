/**
 * Bosun's ClusterCatalog and ClusterExtension CRDs against OLM v1's own (operator-controller's Go
 * module, fetched through the Go module proxy; see test/support/olmv1-crds.ts), schema against
 * schema: every declared field, type, required list, enum, default, format, bound, pattern,
 * list/map type and CEL rule (expression and message), and the names, scope, versions, printer
 * columns and subresources. A difference passes only as one of the named allowances.
 */
import { describe, expect, it } from 'vitest';
import { compareCrds, type CrdDifference, type CrdShape } from '../../../src/apis/crds/compare.js';
import { crdDefinitions, renderCrd } from '../../../src/apis/crds/index.js';
import { type OlmV1Kind, V1Resources } from '../../../src/apis/olmv1.js';
import {
  allowsV1,
  laterV1Rules,
  loadOlmV1Crds,
  OperatorControllerModule,
  OperatorControllerVersion,
  v1CrdAllowances,
} from '../../support/olmv1-crds.js';

const olm = await loadOlmV1Crds();
if (!olm.ok) console.warn(`skipping the comparison with OLM v1's CRDs: ${olm.reason}`);

const kinds = Object.keys(V1Resources) as OlmV1Kind[];
const ours = (kind: OlmV1Kind): CrdShape => {
  const def = crdDefinitions.find(
    (d) => d.resource.group === V1Resources[kind].group && d.resource.kind === kind,
  );
  if (!def) throw new Error(`no CRD definition for ${kind} in src/apis/crds/index.ts`);
  return renderCrd(def) as unknown as CrdShape;
};
const differences = (kind: OlmV1Kind): CrdDifference[] => {
  if (!olm.ok) throw new Error('unreachable: the suite is skipped without OLM v1’s CRDs');
  return compareCrds(ours(kind), olm.crds[kind]);
};
const show = (kind: string, d: CrdDifference) =>
  `${kind} ${d.version ?? ''} ${d.path} ${d.aspect}: Bosun ${JSON.stringify(d.ours)}, OLM v1 ${JSON.stringify(d.theirs)}`;

describe.skipIf(!olm.ok)(
  `Bosun's v1 CRDs against OLM v1's (${OperatorControllerModule}@${OperatorControllerVersion})`,
  () => {
    it.each(kinds)('%s differs from OLM v1’s only where an allowance says so', (kind) => {
      const unexplained = differences(kind)
        .filter((d) => v1CrdAllowances.filter((a) => allowsV1(a, kind, d)).length !== 1)
        .map((d) => show(kind, d));
      expect(unexplained).toEqual([]);
    });

    it('the differences are exactly these', () => {
      const all = kinds.flatMap((kind) =>
        differences(kind).map((d) => `${kind} ${d.version} ${d.path} ${d.aspect}`),
      );
      expect(all).toEqual([
        'ClusterCatalog v1 .status preserveUnknownFields',
        'ClusterExtension v1 .spec.config field',
        'ClusterExtension v1 .spec.progressDeadlineMinutes field',
        'ClusterExtension v1 .status preserveUnknownFields',
      ]);
    });

    it('every CEL rule of OLM v1 is in Bosun’s CRDs with the same expression and message', () => {
      // Collected apart from the walk above, so a comparison that skipped validations shows here.
      for (const kind of kinds) {
        if (!olm.ok) return;
        const theirs = collectRules(olm.crds[kind]);
        expect(theirs.length, kind).toBeGreaterThan(0);
        const later = laterV1Rules[kind] ?? [];
        expect(collectRules(ours(kind)), kind).toEqual([...theirs, ...later].sort());
      }
    });
  },
);

/** Every CEL rule in a CRD as `path: rule => message`, sorted. */
function collectRules(node: unknown, path = ''): string[] {
  if (Array.isArray(node)) return node.flatMap((n, i) => collectRules(n, `${path}[${i}]`));
  if (typeof node !== 'object' || node === null) return [];
  const out: string[] = [];
  for (const [k, v] of Object.entries(node)) {
    if (k === 'x-kubernetes-validations' && Array.isArray(v)) {
      for (const r of v as { rule: string; message: string }[])
        out.push(`${path}: ${r.rule} => ${r.message}`);
    } else if (k !== 'description') out.push(...collectRules(v, `${path}.${k}`));
  }
  return out.sort();
}
