/** Objects that the test and bench operators' bundles share. */

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
