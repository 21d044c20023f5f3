import { describe, expect, it } from 'vitest';
import { ownStepsOf } from '../../../src/controllers/installplan.js';
import type { InstallStep } from '../../../src/install/plan.js';

function step(resolving: string, kind: string, name: string, namespace?: string): InstallStep {
  const object = { apiVersion: 'v1', kind, metadata: { name, ...(namespace ? { namespace } : {}) } };
  return {
    resolving,
    status: 'Unknown',
    resource: {
      sourceName: 'cat',
      sourceNamespace: 'olm',
      group: '',
      version: 'v1',
      kind,
      name,
      manifest: JSON.stringify(object),
      ...(namespace ? { namespace } : {}),
    },
  };
}

describe('ownStepsOf', () => {
  const steps = [
    step('a.v1', 'ConfigMap', 'a-config', 'ops'),
    step('b.v1', 'ConfigMap', 'b-config', 'ops'),
    step('a.v1', 'ClusterRole', 'a-role'),
    step('a.v1', 'ClusterServiceVersion', 'a.v1', 'ops'),
  ];
  const owned = ownStepsOf(steps, { name: 'a.v1', namespace: 'ops', uid: 'uid-a' });
  const refs = (s: InstallStep | undefined) =>
    JSON.parse(s?.resource.manifest ?? '{}').metadata.ownerReferences;

  it("owns the CSV's own namespaced objects", () => {
    expect(refs(owned[0])).toEqual([
      expect.objectContaining({ kind: 'ClusterServiceVersion', name: 'a.v1', uid: 'uid-a' }),
    ]);
  });

  it("leaves another CSV's objects, cluster-scoped objects and the CSV itself as they were", () => {
    expect(owned[1]).toBe(steps[1]);
    expect(owned[2]).toBe(steps[2]);
    expect(owned[3]).toBe(steps[3]);
  });

  it('is idempotent: owning owned steps changes nothing', () => {
    const again = ownStepsOf(owned, { name: 'a.v1', namespace: 'ops', uid: 'uid-a' });
    again.forEach((s, i) => expect(s).toBe(owned[i]));
  });
});
