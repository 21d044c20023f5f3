/** Objects that the test and bench operators' bundles share. */
import type { BundleDoc } from '../../src/apis/fbc.js';

/** An object as an `olm.bundle.object` property (base64 of its JSON), as a published catalog carries it. */
export const inline = (o: unknown) => ({
  type: 'olm.bundle.object',
  value: { data: Buffer.from(JSON.stringify(o)).toString('base64') },
});

/** The namespaced CRD `gadgets.<group>` (kind Gadget), whose schema accepts any fields. */
export function gadgetCrd(group: string) {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `gadgets.${group}` },
    spec: {
      group,
      names: { kind: 'Gadget', listKind: 'GadgetList', plural: 'gadgets', singular: 'gadget' },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

/** A CSV install-strategy Deployment: one replica of `image`, labelled `app`, as `serviceAccount`. */
export function operatorDeployment(name: string, serviceAccount: string, app: string, image: string) {
  return {
    name,
    spec: {
      replicas: 1,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: {
          serviceAccountName: serviceAccount,
          containers: [{ name: 'manager', image }],
        },
      },
    },
  };
}

/**
 * A CSV at version 1.0.0 that supports every install mode but MultiNamespace, installing
 * `deployments` with `permissions` (and `clusterPermissions`) and owning the CRDs in `owned`.
 */
export function operatorCsv(
  name: string,
  spec: {
    displayName?: string;
    owned?: object[];
    permissions: object[];
    clusterPermissions?: object[];
    deployments: object[];
  },
) {
  return {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'ClusterServiceVersion',
    metadata: { name },
    spec: {
      displayName: spec.displayName ?? name,
      version: '1.0.0',
      installModes: [
        { type: 'OwnNamespace', supported: true },
        { type: 'SingleNamespace', supported: true },
        { type: 'MultiNamespace', supported: false },
        { type: 'AllNamespaces', supported: true },
      ],
      customresourcedefinitions: { owned: spec.owned ?? [] },
      install: {
        strategy: 'deployment',
        spec: {
          permissions: spec.permissions,
          clusterPermissions: spec.clusterPermissions ?? [],
          deployments: spec.deployments,
        },
      },
    },
  };
}

/**
 * A package whose versions 1.0.0 … 1.n.0 sit in one channel `stable`, each replacing the one
 * before, each owning the Gadget CRD of `group` with the same Deployment (`deployment(i)` gives
 * version i's): as JSON Lines, a catalog's file. The soak and the churn tests publish it.
 */
export function replacesChain(
  pkg: string,
  group: string,
  n: number,
  deployment: (i: number) => ReturnType<typeof operatorDeployment>,
): string {
  const version = (i: number) => `1.${i}.0`;
  const csvName = (i: number) => `${pkg}.v${version(i)}`;
  const crd = gadgetCrd(group);
  const bundles: BundleDoc[] = [];
  for (let i = 0; i <= n; i++) {
    const csv = operatorCsv(csvName(i), {
      owned: [{ name: `gadgets.${group}`, version: 'v1', kind: 'Gadget' }],
      permissions: [
        { serviceAccountName: pkg, rules: [{ apiGroups: [group], resources: ['gadgets'], verbs: ['get'] }] },
      ],
      deployments: [deployment(i)],
    });
    bundles.push({
      schema: 'olm.bundle',
      package: pkg,
      name: csvName(i),
      image: '',
      properties: [
        { type: 'olm.package', value: { packageName: pkg, version: version(i) } },
        inline(crd),
        inline({
          ...csv,
          spec: { ...csv.spec, version: version(i), ...(i > 0 ? { replaces: csvName(i - 1) } : {}) },
        }),
      ],
    });
  }
  const entries = bundles.map((b, i) => ({ name: b.name, ...(i > 0 ? { replaces: csvName(i - 1) } : {}) }));
  return [
    { schema: 'olm.package', name: pkg, defaultChannel: 'stable' },
    { schema: 'olm.channel', package: pkg, name: 'stable', entries },
    ...bundles,
  ]
    .map((d) => JSON.stringify(d))
    .join('\n');
}
