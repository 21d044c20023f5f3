import { join } from 'node:path';
import type { Binaries } from './build.js';
import { type Component, controlPlaneVersions } from './versions.js';

/** Ports one control plane listens on, all on 127.0.0.1. */
export interface Ports {
  apiserver: number;
  etcdClient: number;
  etcdPeer: number;
}

/** The files of one control plane under its state folder. */
export interface Layout {
  name: string;
  dir: string;
  pkiDir: string;
  logDir: string;
  etcdDataDir: string;
  stateFile: string;
  /** The admin kubeconfig users export. */
  kubeconfig: string;
  componentKubeconfig: Record<'controllerManager' | 'scheduler' | 'kwok', string>;
  kwokConfig: string;
}

export function layoutFor(stateRoot: string, name: string): Layout {
  const dir = join(stateRoot, name);
  return {
    name,
    dir,
    pkiDir: join(dir, 'pki'),
    logDir: join(dir, 'logs'),
    etcdDataDir: join(dir, 'etcd'),
    stateFile: join(dir, 'state.json'),
    kubeconfig: join(dir, 'kubeconfig'),
    componentKubeconfig: {
      controllerManager: join(dir, 'controller-manager.kubeconfig'),
      scheduler: join(dir, 'scheduler.kubeconfig'),
      kwok: join(dir, 'kwok.kubeconfig'),
    },
    kwokConfig: join(dir, 'kwok.yaml'),
  };
}

export const logFile = (l: Layout, c: Component) => join(l.logDir, `${c}.log`);
const pki = (l: Layout, f: string) => join(l.pkiDir, f);

/** The simulated node kwok keeps Ready; Pods of every Deployment are scheduled onto it. */
export const nodeName = 'bosun-node';
export const serviceClusterIPRange = '10.0.0.0/24';

/**
 * The command line of each component. Pure, so that a unit test can check the security-relevant
 * flags (RBAC on, aggregation layer wired, no anonymous admin) without starting anything.
 */
export function componentCommand(c: Component, l: Layout, ports: Ports, bins: Binaries): string[] {
  const etcdURL = `http://127.0.0.1:${ports.etcdClient}`;
  switch (c) {
    case 'etcd':
      return [
        bins.etcd,
        `--name=${l.name}`,
        `--data-dir=${l.etcdDataDir}`,
        `--listen-client-urls=${etcdURL}`,
        `--advertise-client-urls=${etcdURL}`,
        `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
        `--initial-cluster=${l.name}=http://127.0.0.1:${ports.etcdPeer}`,
        '--initial-cluster-state=new',
        // A local development cluster trades crash durability for speed: no fsync on every write.
        '--unsafe-no-fsync=true',
        '--log-level=warn',
      ];
    case 'kube-apiserver':
      return [
        bins['kube-apiserver'],
        `--etcd-servers=${etcdURL}`,
        '--bind-address=127.0.0.1',
        '--advertise-address=127.0.0.1',
        `--secure-port=${ports.apiserver}`,
        `--tls-cert-file=${pki(l, 'apiserver.crt')}`,
        `--tls-private-key-file=${pki(l, 'apiserver.key')}`,
        `--client-ca-file=${pki(l, 'ca.crt')}`,
        '--authorization-mode=RBAC',
        '--anonymous-auth=false',
        `--service-cluster-ip-range=${serviceClusterIPRange}`,
        '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
        `--service-account-key-file=${pki(l, 'sa.pub')}`,
        `--service-account-signing-key-file=${pki(l, 'sa.key')}`,
        // The aggregation layer: the apiserver proxies aggregated APIs with this client identity.
        `--requestheader-client-ca-file=${pki(l, 'front-proxy-ca.crt')}`,
        '--requestheader-allowed-names=front-proxy-client',
        '--requestheader-username-headers=X-Remote-User',
        '--requestheader-group-headers=X-Remote-Group',
        '--requestheader-extra-headers-prefix=X-Remote-Extra-',
        `--proxy-client-cert-file=${pki(l, 'front-proxy-client.crt')}`,
        `--proxy-client-key-file=${pki(l, 'front-proxy-client.key')}`,
        // There is no kube-proxy: reach aggregated API servers through their endpoints directly.
        '--enable-aggregator-routing=true',
        // The apiserver's own address is loopback, which Endpoints may not hold; skip publishing it.
        '--endpoint-reconciler-type=none',
        '--allow-privileged=true',
        '--profiling=false',
        '--v=0',
      ];
    case 'kube-controller-manager':
      return [
        bins['kube-controller-manager'],
        `--kubeconfig=${l.componentKubeconfig.controllerManager}`,
        `--authentication-kubeconfig=${l.componentKubeconfig.controllerManager}`,
        `--authorization-kubeconfig=${l.componentKubeconfig.controllerManager}`,
        '--secure-port=0',
        '--leader-elect=false',
        '--use-service-account-credentials=true',
        `--service-account-private-key-file=${pki(l, 'sa.key')}`,
        `--root-ca-file=${pki(l, 'ca.crt')}`,
        `--cluster-signing-cert-file=${pki(l, 'ca.crt')}`,
        `--cluster-signing-key-file=${pki(l, 'ca.key')}`,
        `--service-cluster-ip-range=${serviceClusterIPRange}`,
        '--profiling=false',
        '--v=0',
      ];
    case 'kube-scheduler':
      return [
        bins['kube-scheduler'],
        `--kubeconfig=${l.componentKubeconfig.scheduler}`,
        `--authentication-kubeconfig=${l.componentKubeconfig.scheduler}`,
        `--authorization-kubeconfig=${l.componentKubeconfig.scheduler}`,
        '--secure-port=0',
        '--leader-elect=false',
        '--profiling=false',
        '--v=0',
      ];
    case 'kwok':
      return [
        bins.kwok,
        `--kubeconfig=${l.componentKubeconfig.kwok}`,
        `--config=${l.kwokConfig}`,
        `--manage-single-node=${nodeName}`,
        '--cidr=10.244.0.0/16',
        '--node-ip=127.0.0.1',
      ];
  }
}

export const kubernetesVersion = controlPlaneVersions.kubernetes;

/** How long the simulated node's Lease lasts; kwok renews it every quarter of that, as a kubelet does. */
export const nodeLeaseDurationSeconds = 40;

/**
 * kwok's configuration. The node's heartbeat is its Lease in kube-node-lease, renewed by kwok:
 * without a lease duration kwok renews no Lease and refreshes the node's status only every ten
 * minutes, so the node-lifecycle controller marks the node NotReady (and every Pod on it unready)
 * once its grace period passes. An explicit file also keeps a user's ~/.kwok/kwok.yaml out.
 */
export function kwokConfiguration(): string {
  return [
    'apiVersion: config.kwok.x-k8s.io/v1alpha1',
    'kind: KwokConfiguration',
    'options:',
    `  nodeLeaseDurationSeconds: ${nodeLeaseDurationSeconds}`,
    '',
  ].join('\n');
}

/** Node architecture names for Node.js's `process.arch`. */
const goArch: Record<string, string> = {
  x64: 'amd64',
  arm64: 'arm64',
  arm: 'arm',
  ppc64: 'ppc64le',
  s390x: 's390x',
};

/**
 * The simulated node as it is registered: labelled as the node of a real single-node cluster is,
 * a control-plane node that also runs workloads: os and arch (with the beta labels older operators
 * still select), hostname, and its roles as both kubeadm (`control-plane`) and OpenShift, the
 * platform most catalog operators were written for (`master`, which kubeadm also set before
 * Kubernetes 1.24, and `worker`). Operators that pin themselves to control-plane nodes by
 * `node-role.kubernetes.io/master` then schedule, as they do on such a cluster. There is room
 * for every operator of a large catalog.
 */
export function nodeObject(arch: string = process.arch) {
  const nodeArch = goArch[arch] ?? arch;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: nodeName,
      labels: {
        'beta.kubernetes.io/arch': nodeArch,
        'beta.kubernetes.io/os': 'linux',
        'kubernetes.io/arch': nodeArch,
        'kubernetes.io/hostname': nodeName,
        'kubernetes.io/os': 'linux',
        'node-role.kubernetes.io/control-plane': '',
        'node-role.kubernetes.io/master': '',
        'node-role.kubernetes.io/worker': '',
        'node.kubernetes.io/exclude-from-external-load-balancers': '',
      },
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
    },
    status: {
      capacity: { cpu: '32', memory: '256Gi', pods: '1000' },
      allocatable: { cpu: '32', memory: '256Gi', pods: '1000' },
      nodeInfo: { architecture: nodeArch, operatingSystem: 'linux' },
    },
  };
}
