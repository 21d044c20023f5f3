import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ensureBinaries } from '../../../src/cluster/build.js';
import { renderKubeconfig } from '../../../src/cluster/kubeconfig.js';
import {
  componentCommand,
  kwokConfiguration,
  layoutFor,
  nodeLeaseDurationSeconds,
  nodeName,
  nodeObject,
} from '../../../src/cluster/layout.js';
import { recipeRoot } from '../../../src/cluster/paths.js';
import { generatePki } from '../../../src/cluster/pki.js';
import { type Component, components, controlPlaneVersions } from '../../../src/cluster/versions.js';

describe('control-plane build recipe', () => {
  it('pins the same Kubernetes, etcd and kwok versions as the code', async () => {
    const kube = await readFile(join(recipeRoot, 'kube', 'go.mod'), 'utf8');
    const kwok = await readFile(join(recipeRoot, 'kwok', 'go.mod'), 'utf8');
    const v = controlPlaneVersions;
    expect(kube).toMatch(new RegExp(`^\\s*k8s.io/kubernetes ${v.kubernetes.replaceAll('.', '\\.')}\\b`, 'm'));
    expect(kube).toMatch(
      new RegExp(`^\\s*go.etcd.io/etcd/server/v3 ${v.etcd.replaceAll('.', '\\.')}\\b`, 'm'),
    );
    expect(kwok).toMatch(new RegExp(`^\\s*sigs.k8s.io/kwok ${v.kwok.replaceAll('.', '\\.')}\\b`, 'm'));
  });

  it('replaces every k8s.io staging module with the release matching the Kubernetes version', async () => {
    const kube = await readFile(join(recipeRoot, 'kube', 'go.mod'), 'utf8');
    const staging = `v0.${controlPlaneVersions.kubernetes.slice('v1.'.length)}`;
    const replaces = [...kube.matchAll(/^\s*(k8s\.io\/[a-z-]+) => (k8s\.io\/[a-z-]+) (v\S+)$/gm)];
    expect(replaces.length).toBeGreaterThan(25);
    for (const [, from, to, version] of replaces) {
      expect(to).toBe(from);
      expect(version).toBe(staging);
    }
  });

  it('says clearly that Go is needed when no go is on PATH, and builds nothing', async () => {
    const cache = await mkdtemp(join(tmpdir(), 'bosun-cache-'));
    try {
      const env = { PATH: '/nonexistent', XDG_CACHE_HOME: cache };
      await expect(ensureBinaries({ env })).rejects.toThrow(/no `go` was found on PATH.*\n.*Install Go/);
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  });
});

describe('component command lines', () => {
  const layout = layoutFor('/state', 'demo');
  const ports = { apiserver: 6443, etcdClient: 2379, etcdPeer: 2380 };
  const bins = Object.fromEntries(components.map((c) => [c, `/bin/${c}`])) as Record<Component, string>;
  const flags = (c: Component) => componentCommand(c, layout, ports, bins).slice(1);

  it('runs the API server with RBAC only, no anonymous access, and the aggregation layer wired', () => {
    const api = flags('kube-apiserver');
    expect(api).toContain('--authorization-mode=RBAC');
    expect(api).toContain('--anonymous-auth=false');
    expect(api).toContain('--bind-address=127.0.0.1');
    expect(api).toContain('--secure-port=6443');
    expect(api).toContain('--etcd-servers=http://127.0.0.1:2379');
    for (const f of [
      '--requestheader-client-ca-file',
      '--proxy-client-cert-file',
      '--proxy-client-key-file',
    ]) {
      expect(api.some((a) => a.startsWith(`${f}=/state/demo/pki/`))).toBe(true);
    }
  });

  it('keeps every listener of etcd on loopback and its data in the control plane folder', () => {
    const etcd = flags('etcd');
    expect(etcd).toContain('--data-dir=/state/demo/etcd');
    for (const a of etcd.filter((x) => x.includes('-urls=')))
      expect(a).toMatch(/=http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('gives controller-manager and scheduler their own identities and no listening port', () => {
    expect(flags('kube-controller-manager')).toContain(
      `--kubeconfig=${layout.componentKubeconfig.controllerManager}`,
    );
    expect(flags('kube-scheduler')).toContain(`--kubeconfig=${layout.componentKubeconfig.scheduler}`);
    expect(flags('kube-controller-manager')).toContain('--secure-port=0');
    // The node stays Ready by its Lease, not by a longer grace period.
    expect(flags('kube-controller-manager').some((f) => f.startsWith('--node-monitor-grace-period'))).toBe(
      false,
    );
    expect(flags('kube-scheduler')).toContain('--secure-port=0');
  });
});

describe('the simulated node', () => {
  it('is given a Lease that kwok renews, the heartbeat the node-lifecycle controller reads', () => {
    const config = parse(kwokConfiguration()) as { kind: string; options: Record<string, unknown> };
    expect(config.kind).toBe('KwokConfiguration');
    expect(config.options.nodeLeaseDurationSeconds).toBe(nodeLeaseDurationSeconds);
    expect(nodeLeaseDurationSeconds).toBeGreaterThan(0);
  });

  it('is labelled like the node of a real single-node cluster', () => {
    const labels = nodeObject('x64').metadata.labels;
    expect(labels).toMatchObject({
      'kubernetes.io/os': 'linux',
      'kubernetes.io/arch': 'amd64',
      'beta.kubernetes.io/os': 'linux',
      'beta.kubernetes.io/arch': 'amd64',
      'kubernetes.io/hostname': nodeName,
      'node-role.kubernetes.io/control-plane': '',
      'node-role.kubernetes.io/master': '',
    });
    expect(nodeObject('arm64').metadata.labels['kubernetes.io/arch']).toBe('arm64');
  });
});

describe('certificates', () => {
  it('issues server and client certificates that verify against their CA, with the right names', async () => {
    const pki = await generatePki();
    const ca = new X509Certificate(pki.ca.cert);
    expect(ca.ca).toBe(true);
    const server = new X509Certificate(pki.apiserver.cert);
    expect(server.verify(ca.publicKey)).toBe(true);
    expect(server.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(server.subjectAltName).toContain('DNS:kubernetes.default.svc');
    expect(server.ca).toBe(false);
    const admin = new X509Certificate(pki.admin.cert);
    expect(admin.verify(ca.publicKey)).toBe(true);
    expect(admin.subject).toContain('O=system:masters');
    const proxy = new X509Certificate(pki.frontProxyClient.cert);
    expect(proxy.verify(new X509Certificate(pki.frontProxyCA.cert).publicKey)).toBe(true);
    expect(proxy.verify(ca.publicKey)).toBe(false);
  });

  it('renders a kubeconfig with embedded credentials that round-trip', async () => {
    const text = renderKubeconfig({
      clusterName: 'c',
      server: 'https://127.0.0.1:1',
      caPem: 'CA',
      user: 'u',
      certPem: 'C',
      keyPem: 'K',
    });
    const kc = parse(text);
    expect(kc['current-context']).toBe('u@c');
    expect(Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString()).toBe('CA');
    expect(Buffer.from(kc.users[0].user['client-key-data'], 'base64').toString()).toBe('K');
  });
});
