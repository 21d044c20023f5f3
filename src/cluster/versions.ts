/**
 * The one Kubernetes release the local control plane is built from, and the etcd and kwok that go
 * with it. The build recipes under tools/controlplane pin the same versions (a unit test checks).
 */
export const controlPlaneVersions = {
  kubernetes: 'v1.35.4',
  etcd: 'v3.6.5',
  kwok: 'v0.7.0',
} as const;

export const Component = {
  Etcd: 'etcd',
  APIServer: 'kube-apiserver',
  ControllerManager: 'kube-controller-manager',
  Scheduler: 'kube-scheduler',
  Kwok: 'kwok',
} as const;
export type Component = (typeof Component)[keyof typeof Component];

/** Start order: each component needs the ones before it. */
export const components: readonly Component[] = [
  Component.Etcd,
  Component.APIServer,
  Component.ControllerManager,
  Component.Scheduler,
  Component.Kwok,
];

/** Names the cache folder, so that a new pin builds anew and never reuses another version's binaries. */
export function versionKey(): string {
  const v = controlPlaneVersions;
  return `kubernetes-${v.kubernetes}_etcd-${v.etcd}_kwok-${v.kwok}`;
}
