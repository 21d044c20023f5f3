/** Objects that the test and bench operators' bundles share. */

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
