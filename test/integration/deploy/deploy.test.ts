/**
 * deploy/ installs Bosun into a cluster: deploy/bosun.yaml (what `kubectl apply -k deploy/` applies)
 * goes through a server-side dry run and is then applied, as deploy/README.md says, and the objects
 * are checked on the API server: the Deployment's Pods are admitted by the `restricted` Pod
 * Security level the `olm` namespace enforces and become Available on the simulated node, the
 * Service and PodDisruptionBudget select them, and the ServiceAccount holds what its ClusterRole
 * says and no more.
 *
 * On a control plane of its own: deploy/ writes cluster-wide objects with fixed names (the CRDs
 * other test files' managers own, ClusterRoles, a CatalogSource pulling from quay.io that every
 * later manager would reconcile). A namespace-renaming overlay cannot rename a CRD or a
 * ClusterRole, so sharing the run's control plane would change what other tests see.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import yaml from 'js-yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { down, up } from '../../../src/cluster/controlplane.js';
import { deployDir, kubectlMissing, renderedFile } from '../../support/deploy-render.js';
import { eventually } from '../support.js';

const run = promisify(execFile);
const missing = await kubectlMissing();
// With BOSUN_TEST_KUBECONFIG the run targets an existing cluster: no second control plane here.
const skip =
  missing ??
  (inject('clusterName') === ''
    ? 'the run uses an existing cluster; deploy/ is tested on a local control plane'
    : undefined);
if (skip) console.warn(`deploy/ test skipped: ${skip}`);

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

const clusterName = `deploy-${process.pid}`;
let kubeconfig = '';
let work = '';

async function kubectl(args: string[]): Promise<string> {
  try {
    return (await run('kubectl', ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 64 * 1024 * 1024 }))
      .stdout;
  } catch (err) {
    const e = err as { stderr?: string; stdout?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')}: ${e.stderr || e.stdout || e.message}`, { cause: err });
  }
}

async function getJson<T>(args: string[]): Promise<T> {
  return JSON.parse(await kubectl(['get', '-o', 'json', ...args])) as T;
}

/** Writes objects to a file of their own (kubectl -f reads files; stdin is one stream). */
async function fileOf(name: string, objs: Obj[]): Promise<string> {
  const path = join(work, name);
  await writeFile(path, objs.map((o) => yaml.dump(o)).join('---\n'));
  return path;
}

const applied: string[] = [];
async function apply(file: string): Promise<void> {
  // Each apply is first a server-side dry run: every object must be accepted (schema, admission,
  // RBAC checks of the bindings) before anything changes.
  applied.push(await kubectl(['apply', '--server-side', '--dry-run=server', '-f', file]));
  applied.push(await kubectl(['apply', '--server-side', '-f', file]));
}

describe.skipIf(skip)('deploy/ in a cluster', () => {
  let objects: Obj[] = [];

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'bosun-deploy-'));
    const state = await up({ name: clusterName });
    kubeconfig = state.kubeconfig;
    objects = (yaml.loadAll(await readFile(renderedFile, 'utf8')) as Obj[]).filter(Boolean);

    // As deploy/README.md says: the CRDs first, until their kinds are served (the CatalogSource
    // and OperatorGroup of deploy/ cannot be mapped before); then the namespaces, which a dry run
    // of the objects in them needs; then everything, which is also what `apply -k` applies.
    await apply(join(deployDir, 'crds'));
    await kubectl([
      'wait',
      '--for',
      'condition=Established',
      '--timeout',
      '60s',
      '-f',
      join(deployDir, 'crds'),
    ]);
    await apply(
      await fileOf(
        'namespaces.yaml',
        objects.filter((o) => o.kind === 'Namespace'),
      ),
    );
    await apply(renderedFile);
  });

  afterAll(async () => {
    if (kubeconfig) await down({ name: clusterName });
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('applies every object of deploy/bosun.yaml, and apply -k deploy/ is the same objects', async () => {
    const byKind = objects.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    for (const kind of [
      'Namespace//olm',
      'Namespace//operators',
      'ServiceAccount/olm/bosun-manager',
      'ClusterRole//bosun-manager',
      'ClusterRoleBinding//bosun-manager',
      'Deployment/olm/bosun-manager',
      'PodDisruptionBudget/olm/bosun-manager',
      'Service/olm/bosun',
      'Service/olm/bosun-packageserver',
      'OperatorGroup/operators/global-operators',
      'CatalogSource/olm/operatorhubio-catalog',
    ]) {
      expect(byKind).toContain(kind);
    }
    for (const o of objects) {
      const ns = o.metadata.namespace ? ['-n', o.metadata.namespace] : [];
      const plural =
        o.kind === 'CatalogSource' || o.kind === 'OperatorGroup'
          ? `${o.kind.toLowerCase()}.operators.coreos.com`
          : o.kind;
      const live = await getJson<Obj>([plural, o.metadata.name, ...ns]);
      expect(live.metadata.name).toBe(o.metadata.name);
    }
    // Applying the kustomization itself changes nothing: it is what bosun.yaml holds.
    const again = await kubectl([
      'apply',
      '--server-side',
      '--dry-run=server',
      '-k',
      deployDir,
      '-o',
      'json',
    ]);
    const items = (JSON.parse(again) as { items: Obj[] }).items;
    expect(items.map((o) => `${o.kind}/${o.metadata.name}`).sort()).toEqual(
      objects.map((o) => `${o.kind}/${o.metadata.name}`).sort(),
    );
  });

  it('olm enforces the restricted Pod Security level: a Pod without the restrictions is refused there', async () => {
    const ns = await getJson<Obj>(['namespace', 'olm']);
    expect(ns.metadata.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    // Several ways to fall short of restricted, so the Deployment's admission below means something.
    const shortfalls: Record<string, Record<string, unknown>> = {
      'no security context (root allowed, escalation, capabilities)': {},
      'privileged container': { securityContext: { privileged: true } },
      'everything but seccomp': {
        securityContext: {
          runAsNonRoot: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        },
      },
    };
    for (const [what, container] of Object.entries(shortfalls)) {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'not-restricted', namespace: 'olm' },
        spec: { containers: [{ name: 'c', image: 'bosun:latest', ...container }] },
      };
      await expect(
        kubectl(['create', '--dry-run=server', '-f', await fileOf('pod.yaml', [pod as Obj])]),
        what,
      ).rejects.toThrow(/violates PodSecurity "restricted/);
    }
  });

  it('the Deployment becomes Available on the simulated node, its Pods admitted as restricted', async () => {
    const deployment = await eventually(
      'the Deployment olm/bosun-manager to be Available',
      async () => {
        const d = await getJson<{
          spec: { replicas: number };
          status: { availableReplicas?: number; conditions?: { type: string; status: string }[] };
        }>(['deployment', 'bosun-manager', '-n', 'olm']);
        const available = d.status.conditions?.find((c) => c.type === 'Available')?.status === 'True';
        if (available && d.status.availableReplicas === d.spec.replicas) return d;
        // Say why when Pods are refused (Pod Security admission answers the ReplicaSet).
        const sets = await getJson<{
          items: { status: { conditions?: { type: string; message?: string }[] } }[];
        }>(['replicasets', '-n', 'olm', '-l', 'app.kubernetes.io/component=manager']);
        const failure = sets.items
          .flatMap((r) => r.status.conditions ?? [])
          .find((c) => c.type === 'ReplicaFailure');
        if (failure) throw new Error(failure.message);
        return undefined;
      },
      90_000,
    );
    const pods = await getJson<{
      items: {
        metadata: { name: string };
        spec: {
          nodeName?: string;
          securityContext: Record<string, unknown>;
          containers: { securityContext: Record<string, unknown> }[];
        };
        status: { phase: string; podIP?: string };
      }[];
    }>(['pods', '-n', 'olm', '-l', 'app.kubernetes.io/name=bosun,app.kubernetes.io/component=manager']);
    // Two replicas (one leads, both serve reads), both Running on the one simulated node: the
    // anti-affinity is a preference, so a one-node cluster still runs both.
    expect(deployment.spec.replicas).toBe(2);
    expect(pods.items).toHaveLength(deployment.spec.replicas);
    for (const pod of pods.items) {
      expect(pod.spec.nodeName).toBe('bosun-node');
      expect(pod.status.phase).toBe('Running');
      expect(pod.spec.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(pod.spec.containers[0]?.securityContext).toEqual({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
      });
    }
  });

  it('the Service and the PodDisruptionBudget select the manager Pods', async () => {
    const podIPs = async () =>
      (
        await getJson<{ items: { status: { podIP?: string } }[] }>([
          'pods',
          '-n',
          'olm',
          '-l',
          'app.kubernetes.io/component=manager',
        ])
      ).items
        .map((p) => p.status.podIP)
        .filter(Boolean)
        .sort();
    const want = await podIPs();
    // bosun: the web catalog and /metrics; bosun-packageserver: the PackageManifest API, at the
    // Pods' package-api port, which the APIService names through it.
    for (const [service, port] of [
      ['bosun', 8080],
      ['bosun-packageserver', 8443],
    ] as const) {
      const endpoints = await eventually(
        `the Service ${service} to have every Pod as an endpoint`,
        async () => {
          const slices = await getJson<{
            items: { endpoints?: { addresses: string[] }[]; ports?: { port: number }[] }[];
          }>(['endpointslices', '-n', 'olm', '-l', `kubernetes.io/service-name=${service}`]);
          const addresses = slices.items
            .flatMap((s) => (s.endpoints ?? []).flatMap((e) => e.addresses))
            .sort();
          for (const s of slices.items) expect(s.ports?.map((p) => p.port)).toEqual([port]);
          return addresses.length === want.length ? addresses : undefined;
        },
      );
      expect(endpoints).toEqual(want);
    }

    const pdb = await eventually('the PodDisruptionBudget to count the Pods', async () => {
      const p = await getJson<{
        spec: { minAvailable: number };
        status: { expectedPods?: number; currentHealthy?: number; disruptionsAllowed?: number };
      }>(['poddisruptionbudget', 'bosun-manager', '-n', 'olm']);
      return p.status.expectedPods ? p : undefined;
    });
    // The budget counts exactly the manager's two Pods, all healthy, and lets a drain take one of
    // them, never both.
    expect(pdb.status.expectedPods).toBe(2);
    expect(pdb.status.expectedPods).toBe((await podIPs()).length);
    expect(pdb.status.currentHealthy).toBe(pdb.status.expectedPods);
    expect(pdb.spec.minAvailable).toBe(1);
    expect(pdb.status.disruptionsAllowed).toBe(1);
  });

  it('the ServiceAccount may do what its ClusterRole lists, and no more; the role holds no *', async () => {
    const role = await getJson<{ rules: Record<string, string[]>[] }>(['clusterrole', 'bosun-manager']);
    const stars = role.rules.flatMap((r) =>
      ['apiGroups', 'resources', 'verbs', 'nonResourceURLs'].flatMap((f) =>
        (r[f] ?? []).filter((v) => v.includes('*')),
      ),
    );
    expect(stars).toEqual([]);

    const as = ['--as', 'system:serviceaccount:olm:bosun-manager'];
    // `auth can-i` prints yes or no, and exits 1 for no.
    const can = async (...args: string[]) =>
      (
        await run('kubectl', ['--kubeconfig', kubeconfig, 'auth', 'can-i', ...args, ...as]).catch(
          (err: { stdout?: string }) => ({ stdout: err.stdout ?? '' }),
        )
      ).stdout.trim();
    // What it needs: OLM's API everywhere, an operator's RBAC (with escalate and bind), its Lease.
    expect(await can('watch', 'subscriptions.operators.coreos.com', '--all-namespaces')).toBe('yes');
    expect(await can('patch', 'installplans.operators.coreos.com/status', '-n', 'team-a')).toBe('yes');
    expect(await can('create', 'customresourcedefinitions.apiextensions.k8s.io')).toBe('yes');
    expect(await can('escalate', 'clusterroles.rbac.authorization.k8s.io')).toBe('yes');
    expect(await can('bind', 'roles.rbac.authorization.k8s.io', '-n', 'team-a')).toBe('yes');
    expect(await can('impersonate', 'serviceaccounts', '-n', 'team-a')).toBe('yes');
    expect(await can('update', 'leases.coordination.k8s.io', '-n', 'olm')).toBe('yes');
    // An OperatorGroup labels its target namespaces.
    expect(await can('patch', 'namespaces/team-a')).toBe('yes');
    // What it does not: Pods, nodes, other namespaces' Leases, namespaces other than its own.
    expect(await can('get', 'pods', '-n', 'team-a')).toMatch(/^no/);
    expect(await can('create', 'pods', '-n', 'olm')).toMatch(/^no/);
    expect(await can('list', 'nodes')).toMatch(/^no/);
    expect(await can('update', 'leases.coordination.k8s.io', '-n', 'kube-system')).toMatch(/^no/);
    expect(await can('create', 'namespaces')).toMatch(/^no/);
    expect(await can('delete', 'namespaces/olm')).toMatch(/^no/);
  });

  it('the manager reads the custom resources of APIs it installed, and only those', async () => {
    // What the manager writes for an API an operator provides (OLM's <plural>.<group>-<version>-view),
    // beside a role anyone else aggregates into view, which the manager must not gather.
    const viewRole = (name: string, resource: string, labels: Record<string, string>): Obj => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name, labels: { 'rbac.authorization.k8s.io/aggregate-to-view': 'true', ...labels } },
      rules: [{ apiGroups: ['deploy.bosun.dev'], resources: [resource], verbs: ['get', 'list', 'watch'] }],
    });
    await kubectl([
      'apply',
      '--server-side',
      '-f',
      await fileOf('view-roles.yaml', [
        viewRole('gadgets.deploy.bosun.dev-v1-view', 'gadgets', { 'olm.managed': 'true' }),
        viewRole('someone-elses-view', 'gizmos', {}),
      ]),
    ]);
    // Asked with a SubjectAccessReview: `kubectl auth can-i` says no for a kind no CRD serves.
    const allowed = async (verb: string, resource: string): Promise<boolean> => {
      const review = {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        metadata: {},
        spec: {
          user: 'system:serviceaccount:olm:bosun-manager',
          groups: ['system:serviceaccounts', 'system:serviceaccounts:olm', 'system:authenticated'],
          resourceAttributes: { verb, group: 'deploy.bosun.dev', resource },
        },
      };
      const out = await kubectl([
        'create',
        '-o',
        'json',
        '-f',
        await fileOf('review.yaml', [review as unknown as Obj]),
      ]);
      return (JSON.parse(out) as { status: { allowed: boolean } }).status.allowed;
    };
    await eventually('the manager to read gadgets', async () =>
      (await allowed('list', 'gadgets')) ? true : undefined,
    );
    expect(await allowed('list', 'gizmos')).toBe(false);
    expect(await allowed('delete', 'gadgets')).toBe(false);
  });
});
