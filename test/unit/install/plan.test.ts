import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClusterServiceVersion } from '../../../src/apis/operators.js';
import {
  type InstallStep,
  type OperatorGroupTargets,
  ownInstallSteps,
  planInstall,
  type Resource,
  stepObject,
  stepPhase,
  stepsByPhase,
} from '../../../src/install/index.js';
import { formatProblem } from '../../../src/util/result.js';
import { csvObjectsFor, CSVUid, planSample, renderInstall, Source } from './render.js';
import {
  BundleName,
  bundleObjectProperty,
  fixtures,
  manifestFiles,
  manifestText,
  sampleBundle,
} from './support.js';
import { runs } from '../../support/properties.js';

const NS = 'operators';
const own: OperatorGroupTargets = { operatorGroup: 'sample-og', namespaces: [NS] };
const single: OperatorGroupTargets = { operatorGroup: 'sample-og', namespaces: ['team-a'] };
const multi: OperatorGroupTargets = { operatorGroup: 'sample-og', namespaces: ['team-a', 'team-b'] };
const all: OperatorGroupTargets = { operatorGroup: 'global-operators', namespaces: [''] };

/** `Kind/name@namespace` for each step, in order. */
function outline(steps: InstallStep[]): string[] {
  return steps.map(
    (s) => `${s.resource.kind}/${s.resource.name}${s.resource.namespace ? `@${s.resource.namespace}` : ''}`,
  );
}

function objectsOf(steps: InstallStep[], kind: string): Resource[] {
  return steps.filter((s) => s.resource.kind === kind).map(stepObject);
}

describe('planInstall golden manifests', () => {
  const shapes = [
    {
      file: 'own-namespace.yaml',
      title: 'OwnNamespace: OperatorGroup sample-og in operators targeting operators',
      targets: own,
    },
    {
      file: 'single-namespace.yaml',
      title: 'SingleNamespace: OperatorGroup sample-og in operators targeting team-a',
      targets: single,
    },
    {
      file: 'all-namespaces.yaml',
      title: 'AllNamespaces: OperatorGroup global-operators in operators targeting all namespaces',
      targets: all,
    },
  ];
  for (const shape of shapes) {
    it(`renders the sample bundle for ${shape.title.split(':')[0]} as in golden/${shape.file}`, async () => {
      const steps = planSample(NS, shape.targets);
      const text = renderInstall(shape.title, steps, csvObjectsFor(steps, shape.targets));
      await expect(text).toMatchFileSnapshot(`${fixtures}golden/${shape.file}`);
    });
  }
});

describe('planInstall', () => {
  it('orders steps CRDs, ServiceAccounts, RBAC, other objects, then the CSV', () => {
    const steps = planSample(NS, single);
    expect(stepsByPhase(steps).map((g) => g.phase)).toEqual([
      'CRDs',
      'ServiceAccounts',
      'RBAC',
      'Resources',
      'CSV',
    ]);
    const phases = steps.map(stepPhase);
    const order = ['CRDs', 'ServiceAccounts', 'RBAC', 'Resources', 'CSV'];
    expect(phases.map((p) => order.indexOf(p))).toEqual(
      [...phases.map((p) => order.indexOf(p))].sort((a, b) => a - b),
    );
    expect(steps.at(-1)?.resource.kind).toBe('ClusterServiceVersion');
  });

  it('plans an OwnNamespace install of the sample bundle as exactly these steps', () => {
    const role = (sa: string) =>
      expect.stringMatching(new RegExp(`^Role/${BundleName}-${sa}-[0-9a-f]{10}@${NS}$`));
    const binding = (sa: string) =>
      expect.stringMatching(new RegExp(`^RoleBinding/${BundleName}-${sa}-[0-9a-f]{10}@${NS}$`));
    expect(outline(planSample(NS, own))).toEqual([
      'CustomResourceDefinition/widgets.example.com',
      `ServiceAccount/sample-operator@${NS}`,
      `ServiceAccount/sample-webhook@${NS}`,
      expect.stringMatching(new RegExp(`^ClusterRole/${BundleName}-[0-9a-f]{10}$`)),
      role('sample-operator'),
      role('sample-webhook'),
      expect.stringMatching(new RegExp(`^ClusterRoleBinding/${BundleName}-[0-9a-f]{10}$`)),
      binding('sample-operator'),
      binding('sample-webhook'),
      `Service/sample-operator-metrics@${NS}`,
      `ConfigMap/sample-operator-config@${NS}`,
      `ClusterServiceVersion/${BundleName}@${NS}`,
    ]);
  });

  it('applies roles before the bindings that refer to them', () => {
    const kinds = planSample(NS, single)
      .filter((s) => stepPhase(s) === 'RBAC')
      .map((s) => s.resource.kind);
    expect(kinds.lastIndexOf('ClusterRole')).toBeLessThan(kinds.indexOf('ClusterRoleBinding'));
    expect(kinds.lastIndexOf('Role')).toBeLessThan(kinds.indexOf('RoleBinding'));
  });

  it('fills every step as OLM does: resolving CSV, catalog source, GVK, name, JSON manifest, status Unknown', () => {
    const steps = planSample(NS, own);
    for (const s of steps) {
      expect(s.resolving).toBe(BundleName);
      expect(s.status).toBe('Unknown');
      expect(s.resource.sourceName).toBe(Source.name);
      expect(s.resource.sourceNamespace).toBe(Source.namespace);
      const obj = stepObject(s);
      expect(obj.kind).toBe(s.resource.kind);
      expect(obj.metadata.name).toBe(s.resource.name);
      expect(obj.metadata.namespace).toBe(s.resource.namespace);
    }
    const crd = steps[0];
    expect(crd?.resource).toMatchObject({
      group: 'apiextensions.k8s.io',
      version: 'v1',
      kind: 'CustomResourceDefinition',
    });
  });

  it('creates each ServiceAccount the permissions name once, in the install namespace', () => {
    const accounts = objectsOf(planSample(NS, all), 'ServiceAccount');
    expect(accounts.map((a) => `${a.metadata.name}@${a.metadata.namespace}`)).toEqual([
      'sample-operator@operators',
      'sample-webhook@operators',
    ]);
  });

  it("keeps the bundle's own ServiceAccount when a permission names it", () => {
    const webhook = objectsOf(planSample(NS, own), 'ServiceAccount').find(
      (a) => a.metadata.name === 'sample-webhook',
    );
    expect(webhook?.imagePullSecrets).toEqual([{ name: 'sample-registry' }]);
    expect(webhook?.metadata.annotations).toEqual({
      'example.com/purpose': 'serves the Widget admission webhook',
    });
    expect(webhook?.metadata.labels?.['olm.owner']).toBe(BundleName);
  });

  it('grants namespaced permissions in the operator namespace only, for OwnNamespace', () => {
    const roles = objectsOf(planSample(NS, own), 'Role');
    expect(roles.map((r) => r.metadata.namespace)).toEqual([NS, NS]);
    expect(objectsOf(planSample(NS, own), 'RoleBinding')).toHaveLength(2);
  });

  it('grants namespaced permissions in the operator namespace only, whatever the targets (copies are the CSV controller’s)', () => {
    const rbac = (targets: OperatorGroupTargets) =>
      planSample(NS, targets)
        .filter((s) => ['Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding'].includes(s.resource.kind))
        .map((s) => stepObject(s));
    for (const targets of [single, multi, all]) expect(rbac(targets)).toEqual(rbac(own));
    const bindings = objectsOf(planSample(NS, multi), 'RoleBinding');
    for (const b of bindings) {
      expect(b.metadata.namespace).toBe(NS);
      expect(b.metadata.labels?.['olm.copiedFrom']).toBeUndefined();
      expect((b.subjects as { namespace: string }[])[0]?.namespace).toBe(NS);
      expect((b.roleRef as { name: string }).name).toBe(b.metadata.name);
    }
  });

  it('lifts no permissions for AllNamespaces: the CSV controller does, next to the Roles the plan keeps', () => {
    const steps = planSample(NS, all);
    expect(objectsOf(steps, 'Role').map((r) => r.metadata.namespace)).toEqual([NS, NS]);
    const clusterRoles = objectsOf(steps, 'ClusterRole');
    // one clusterPermission
    expect(clusterRoles).toHaveLength(1);
    const lifted = csvObjectsFor(steps, all).rbac.filter((r) => r.kind === 'ClusterRole');
    expect(lifted.map((r) => r.metadata.name.startsWith(`${BundleName}-sample-`))).toEqual([true, true]);
  });

  it('turns clusterPermissions into a ClusterRole and ClusterRoleBinding whatever the OperatorGroup', () => {
    for (const targets of [own, single, multi, all]) {
      const steps = planSample(NS, targets);
      const granted = objectsOf(steps, 'ClusterRole').filter((r) =>
        (r.rules as { apiGroups?: string[] }[]).some((rule) => rule.apiGroups?.includes('example.com')),
      );
      expect(granted).toHaveLength(1);
      const binding = objectsOf(steps, 'ClusterRoleBinding').find(
        (b) => b.metadata.name === granted[0]?.metadata.name,
      );
      expect(binding?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'sample-operator', namespace: NS }]);
    }
  });

  it('labels every object olm.managed, and every object but CRDs and the CSV with its owner', () => {
    for (const s of planSample(NS, single)) {
      const labels = stepObject(s).metadata.labels ?? {};
      if (s.resource.kind === 'ClusterServiceVersion') {
        expect(labels['olm.owner']).toBeUndefined();
        continue;
      }
      expect(labels['olm.managed']).toBe('true');
      if (s.resource.kind === 'CustomResourceDefinition') {
        // CRDs and their custom resources outlive the operator: uninstall must not find them.
        expect(labels['olm.owner']).toBeUndefined();
      } else {
        expect(labels).toMatchObject({
          'olm.owner': BundleName,
          'olm.owner.kind': 'ClusterServiceVersion',
          'olm.owner.namespace': NS,
        });
      }
    }
  });

  it('gives generated RBAC deterministic names within 63 characters that differ between namespaces of install', () => {
    const all = { operatorGroup: 'og', namespaces: [''] };
    const names = (ns: string) => {
      const steps = planSample(ns, all);
      return [
        ...steps.filter((s) => s.resource.kind === 'ClusterRole').map((s) => s.resource.name),
        ...csvObjectsFor(steps, all).rbac.map((r) => r.metadata.name),
      ];
    };
    expect(names('a')).toEqual(names('a'));
    expect(names('a')).not.toEqual(names('b'));
    for (const n of names('a')) expect(n.length).toBeLessThanOrEqual(63);
  });

  it('names generated RBAC the same whatever order the catalog lists the objects in', () => {
    const files = manifestFiles().map(manifestText);
    fc.assert(
      fc.property(
        fc.shuffledSubarray(files, { minLength: files.length, maxLength: files.length }),
        (shuffled) => {
          const r = planInstall({
            bundle: sampleBundle(shuffled),
            namespace: NS,
            targets: multi,
            source: Source,
          });
          if (!r.ok) return false;
          expect(r.value).toEqual(planSample(NS, multi));
          return true;
        },
      ),
      runs(20),
    );
  });

  it('renames a Role when its rules change, so an upgrade never edits the grant of a running version', () => {
    const csvText = manifestText('sample-operator.clusterserviceversion.yaml');
    const changed = csvText.replace('resources: [secrets]', 'resources: [secrets, configmaps]');
    const texts = manifestFiles().map((f) =>
      f.endsWith('clusterserviceversion.yaml') ? changed : manifestText(f),
    );
    const r = planInstall({ bundle: sampleBundle(texts), namespace: NS, targets: own, source: Source });
    if (!r.ok) throw new Error('plan failed');
    const before = objectsOf(planSample(NS, own), 'Role').map((x) => x.metadata.name);
    const after = objectsOf(r.value, 'Role').map((x) => x.metadata.name);
    expect(after.filter((n) => before.includes(n))).toHaveLength(1);
  });

  it("sets the CSV's namespace, replaces, properties and OperatorGroup annotations", () => {
    const steps = planSample(NS, single, 'sample-operator.v0.1.5');
    const csv = stepObject(steps.at(-1) as InstallStep) as unknown as ClusterServiceVersion;
    expect(csv.metadata.namespace).toBe(NS);
    expect(csv.spec.replaces).toBe('sample-operator.v0.1.5');
    expect(csv.metadata.annotations).toMatchObject({
      'olm.operatorGroup': 'sample-og',
      'olm.operatorNamespace': NS,
      'olm.targetNamespaces': 'team-a',
      capabilities: 'Basic Install',
    });
    expect(JSON.parse(csv.metadata.annotations?.['operatorframework.io/properties'] ?? '')).toEqual({
      properties: [
        { type: 'olm.package', value: { packageName: 'sample-operator', version: '0.2.0' } },
        { type: 'olm.gvk', value: { group: 'example.com', kind: 'Widget', version: 'v1' } },
      ],
    });
  });

  it("drops the bundle's spec.replaces on a fresh install, as OLM does", () => {
    const csv = stepObject(planSample(NS, own).at(-1) as InstallStep) as unknown as ClusterServiceVersion;
    expect(csv.spec.replaces).toBeUndefined();
  });

  it('gives ServiceAccount subjects of bundle bindings the install namespace', () => {
    const binding = bundleObjectProperty(
      'apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: sample-metrics-reader\n' +
        'roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: view\n' +
        'subjects:\n  - kind: ServiceAccount\n    name: sample-operator\n  - kind: User\n    name: jane\n',
    );
    const texts = [
      ...manifestFiles().map(manifestText),
      Buffer.from((binding.value as { data: string }).data, 'base64').toString(),
    ];
    const r = planInstall({ bundle: sampleBundle(texts), namespace: NS, targets: own, source: Source });
    if (!r.ok) throw new Error('plan failed');
    const crb = objectsOf(r.value, 'ClusterRoleBinding').find(
      (b) => b.metadata.name === 'sample-metrics-reader',
    );
    expect(crb?.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'sample-operator', namespace: NS },
      { kind: 'User', name: 'jane' },
    ]);
  });

  it('rejects a bundle object that takes the name of a generated one', () => {
    const generated = objectsOf(planSample(NS, own), 'Role')[0]?.metadata.name ?? '';
    const clash = `apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: ${generated}\nrules: []\n`;
    const r = planInstall({
      bundle: sampleBundle([...manifestFiles().map(manifestText), clash]),
      namespace: NS,
      targets: own,
      source: Source,
    });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.errors.map(formatProblem)).toEqual([
      `bundle ${BundleName}, Role/${generated}: metadata.name: has the name of an object Bosun generates from the CSV permissions; rename it`,
    ]);
  });
});

describe('ownInstallSteps', () => {
  const csv = { name: BundleName, namespace: NS, uid: CSVUid };

  it('adds a non-blocking ownerReference to the CSV on every object in its namespace but the CSV', () => {
    const owned = ownInstallSteps(planSample(NS, single), csv);
    for (const s of owned) {
      const refs = stepObject(s).metadata.ownerReferences;
      if (s.resource.namespace === NS && s.resource.kind !== 'ClusterServiceVersion') {
        expect(refs).toEqual([
          {
            apiVersion: 'operators.coreos.com/v1alpha1',
            kind: 'ClusterServiceVersion',
            name: BundleName,
            uid: CSVUid,
            controller: false,
            blockOwnerDeletion: false,
          },
        ]);
      } else {
        // cluster-scoped, in another namespace, or the CSV itself
        expect(refs).toBeUndefined();
      }
    }
  });

  it('is idempotent and replaces a reference to an earlier CSV of the same name', () => {
    const once = ownInstallSteps(planSample(NS, own), { ...csv, uid: 'old-uid' });
    const twice = ownInstallSteps(ownInstallSteps(once, csv), csv);
    for (const s of twice) {
      const refs = stepObject(s).metadata.ownerReferences ?? [];
      expect(refs.filter((r) => r.uid === 'old-uid')).toEqual([]);
      expect(refs.length).toBeLessThanOrEqual(1);
    }
  });
});
