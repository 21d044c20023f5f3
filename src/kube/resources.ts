/** The built-in Kubernetes resources Bosun reads and writes, by kind (OLM's own are in apis/operators.ts). */
import type { ResourceType } from '../apis/meta.js';

const core = (kind: string, plural: string, namespaced: boolean): ResourceType => ({
  group: '',
  version: 'v1',
  kind,
  plural,
  namespaced,
});
const rbac = (kind: string, plural: string, namespaced: boolean): ResourceType => ({
  group: 'rbac.authorization.k8s.io',
  version: 'v1',
  kind,
  plural,
  namespaced,
});

export const Builtin = {
  Namespace: core('Namespace', 'namespaces', false),
  ConfigMap: core('ConfigMap', 'configmaps', true),
  ServiceAccount: core('ServiceAccount', 'serviceaccounts', true),
  Deployment: { group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true },
  CustomResourceDefinition: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
  },
  Role: rbac('Role', 'roles', true),
  RoleBinding: rbac('RoleBinding', 'rolebindings', true),
  ClusterRole: rbac('ClusterRole', 'clusterroles', false),
  ClusterRoleBinding: rbac('ClusterRoleBinding', 'clusterrolebindings', false),
} as const satisfies Record<string, ResourceType>;
