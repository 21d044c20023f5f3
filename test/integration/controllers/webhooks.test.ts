/**
 * Operators that serve webhooks and API services install as OLM installs them, on the real
 * control plane:
 * - sap-btp-operator and cert-manager from the OperatorHub corpus (BOSUN_CORPUS_DIR),
 *   imported to a file-based catalog, served over an http CatalogSource and subscribed as a user
 *   would: a certificate Secret, a Service, the certificate mounted into the operator's pods,
 *   webhook configurations carrying the CA and scoped to the OperatorGroup's namespaces, CRD
 *   conversion webhooks (cert-manager supports only AllNamespaces), the CSV Succeeded; deleting
 *   the CSV removes what was created and gives the CRDs their conversion back;
 * - an operator owning an aggregated API service (a test bundle): the APIService points at the
 *   Service with the CA, the CSV Succeeds although nothing serves the API on a simulated node (a
 *   Warning event says so), an upgrade takes the APIService over, and uninstall removes it.
 * Every webhook configuration and APIService a test created is deleted after it, also when it
 * fails, so none is left to refuse requests on the shared cluster.
 */
import { createHash, X509Certificate } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import type { ClusterServiceVersion, OperatorGroup } from '../../../src/apis/operators.js';
import { channelHeads } from '../../../src/olm/channel-graph.js';
import { importPackageDir } from '../../../src/catalog/import.js';
import type { RunningManager } from '../../../src/manager/manager.js';
import { collectionPath, type KubeClient, objectPath } from '../../../src/kube/client.js';
import { isNotFound } from '../../../src/kube/errors.js';
import { eventually, freshNamespace } from '../support.js';
import {
  createInstallPlan,
  createOperatorGroup,
  csvInPhase,
  csvPath,
  eventsFor,
  type Harness,
  installOperatorCrds,
  startInstallControllers,
  testBundle,
  testCatalog,
  testCatalogSnapshot,
  testCSV,
  TestOperator,
} from './install-harness.js';
import { catalogSource, client, create, get, Resources, startTestManager, subscription } from './support.js';

const corpus = process.env.BOSUN_CORPUS_DIR;
const present = corpus !== undefined && existsSync(corpus);
if (!present) {
  console.warn(
    'corpus webhook operators skipped: set BOSUN_CORPUS_DIR to the upstream-community-operators folder of the corpus',
  );
}

const R = {
  Secret: { group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true },
  Service: { group: '', version: 'v1', kind: 'Service', plural: 'services', namespaced: true },
  Namespace: { group: '', version: 'v1', kind: 'Namespace', plural: 'namespaces', namespaced: false },
  Deployment: { group: 'apps', version: 'v1', kind: 'Deployment', plural: 'deployments', namespaced: true },
  Validating: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'ValidatingWebhookConfiguration',
    plural: 'validatingwebhookconfigurations',
    namespaced: false,
  },
  Mutating: {
    group: 'admissionregistration.k8s.io',
    version: 'v1',
    kind: 'MutatingWebhookConfiguration',
    plural: 'mutatingwebhookconfigurations',
    namespaced: false,
  },
  APIService: {
    group: 'apiregistration.k8s.io',
    version: 'v1',
    kind: 'APIService',
    plural: 'apiservices',
    namespaced: false,
  },
  CRD: {
    group: 'apiextensions.k8s.io',
    version: 'v1',
    kind: 'CustomResourceDefinition',
    plural: 'customresourcedefinitions',
    namespaced: false,
  },
  ClusterRoleBinding: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'ClusterRoleBinding',
    plural: 'clusterrolebindings',
    namespaced: false,
  },
  RoleBinding: {
    group: 'rbac.authorization.k8s.io',
    version: 'v1',
    kind: 'RoleBinding',
    plural: 'rolebindings',
    namespaced: true,
  },
} as const;

type Webhook = {
  name: string;
  clientConfig: {
    caBundle?: string;
    service?: { name: string; namespace: string; path?: string; port?: number };
  };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  failurePolicy?: string;
};
type WebhookConfiguration = KubeObject & { webhooks: Webhook[] };
type Secret = KubeObject & { type?: string; data?: Record<string, string> };
type Deployment = KubeObject & {
  spec: {
    template: {
      metadata?: { annotations?: Record<string, string> };
      spec: {
        volumes?: { name: string; secret?: { secretName: string } }[];
        containers: { name: string; volumeMounts?: { name: string; mountPath: string }[] }[];
      };
    };
  };
};

const b64 = (s: string | undefined) => Buffer.from(s ?? '', 'base64').toString('utf8');

async function listAll<T extends KubeObject>(
  c: KubeClient,
  resource: (typeof R)[keyof typeof R],
  labelSelector: string,
): Promise<T[]> {
  const list = await c.request<{ items: T[] }>({ path: collectionPath(resource), query: { labelSelector } });
  return list.items;
}

/** Every webhook configuration and APIService a CSV of `ns` owns, by its owner labels. */
async function clusterObjectsOf(c: KubeClient, ns: string) {
  const selector = `olm.owner.namespace=${ns}`;
  return {
    validating: await listAll<WebhookConfiguration>(c, R.Validating, selector),
    mutating: await listAll<WebhookConfiguration>(c, R.Mutating, selector),
    apiServices: await listAll<KubeObject>(c, R.APIService, selector),
  };
}

/** Deletes what a test left of them (a test that failed midway): never leave a webhook behind. */
async function removeClusterObjects(namespaces: string[]) {
  const c = client();
  for (const ns of namespaces.splice(0)) {
    for (const resource of [R.Validating, R.Mutating, R.APIService]) {
      for (const o of await listAll<KubeObject>(c, resource, `olm.owner.namespace=${ns}`)) {
        await c
          .request({ method: 'DELETE', path: objectPath(resource, o.metadata?.name ?? '') })
          .catch((err: unknown) => {
            if (!isNotFound(err)) throw err;
          });
      }
    }
  }
}

/** The certificate Secret: a TLS pair for the Service's hosts, signed by the CA it holds. */
function expectServingSecret(secret: Secret | undefined, service: string, ns: string): string {
  expect(secret?.type).toBe('kubernetes.io/tls');
  const caPEM = b64(secret?.data?.olmCAKey);
  const cert = new X509Certificate(b64(secret?.data?.['tls.crt']));
  const ca = new X509Certificate(caPEM);
  for (const host of [`${service}.${ns}`, `${service}.${ns}.svc`, `${service}.${ns}.svc.cluster.local`]) {
    expect(cert.checkHost(host)).toBe(host);
  }
  expect(cert.verify(ca.publicKey)).toBe(true);
  expect(b64(secret?.data?.['tls.key'])).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
  const validFor = Date.parse(cert.validTo) - Date.parse(cert.validFrom);
  expect(validFor).toBe(730 * 24 * 3_600_000);
  expect(secret?.metadata?.annotations?.olmcahash).toBe(createHash('sha256').update(caPEM).digest('hex'));
  return caPEM;
}

/** The operator's Deployment mounts the Secret in every container and carries the CA's hash. */
function expectMounted(d: Deployment | undefined, secret: string, caPEM: string) {
  const volumes = d?.spec.template.spec.volumes ?? [];
  expect(
    volumes
      .filter((v) => v.secret?.secretName === secret)
      .map((v) => v.name)
      .sort(),
  ).toEqual(['apiservice-cert', 'webhook-cert']);
  for (const c of d?.spec.template.spec.containers ?? []) {
    const mounts = Object.fromEntries((c.volumeMounts ?? []).map((m) => [m.name, m.mountPath]));
    expect(mounts['apiservice-cert']).toBe('/apiserver.local.config/certificates');
    expect(mounts['webhook-cert']).toBe('/tmp/k8s-webhook-server/serving-certs');
  }
  expect(d?.spec.template.metadata?.annotations?.olmcahash).toBe(
    createHash('sha256').update(caPEM).digest('hex'),
  );
}

describe.skipIf(!present)('webhook operators from the corpus', () => {
  let manager: RunningManager;
  let server: Server;
  let url = '';
  const touched: string[] = [];

  beforeAll(async () => {
    const packages = [
      { pkg: 'sap-btp-operator', head: 'sap-btp-operator.v0.1.6' },
      { pkg: 'cert-manager', head: 'cert-manager.v1.4.0' },
    ];
    const imported = await Promise.all(packages.map((p) => importPackageDir(join(corpus ?? '', p.pkg))));
    for (const [i, { cfg }] of imported.entries()) {
      const channel = cfg.channels.find((c) => c.name === cfg.packages[0]?.defaultChannel);
      expect(channelHeads(channel?.entries ?? [])).toEqual([packages[i]?.head]);
    }
    const catalog = imported
      .flatMap(({ cfg }) => [...cfg.packages, ...cfg.channels, ...cfg.bundles])
      .map((d) => JSON.stringify(d))
      .join('\n');
    server = createServer((_req, res) => res.writeHead(200).end(catalog));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/catalog`;
    manager = await startTestManager();
  });
  afterEach(async () => {
    await removeClusterObjects(touched);
  });
  afterAll(async () => {
    await manager?.stop();
    if (server) await new Promise((r) => server.close(r));
  });

  async function subscribe(ns: string, pkg: string, og: OperatorGroup['spec']): Promise<OperatorGroup> {
    touched.push(ns);
    await create(
      Resources.CatalogSource,
      ns,
      catalogSource(ns, 'corpus', { sourceType: 'http', address: url }),
    );
    const group = await create<OperatorGroup>(Resources.OperatorGroup, ns, {
      apiVersion: 'operators.coreos.com/v1',
      kind: 'OperatorGroup',
      metadata: { name: 'og', namespace: ns },
      ...(og ? { spec: og } : {}),
    });
    await create(Resources.Subscription, ns, subscription(ns, pkg, { name: pkg, source: 'corpus' }));
    return group;
  }

  const succeeded = (ns: string, csv: string) =>
    eventually(
      `CSV ${csv} to be Succeeded`,
      async () => {
        const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csv);
        return c?.status?.phase === 'Succeeded' ? c : undefined;
      },
      170_000,
    ).catch(async (err: unknown) => {
      // Say where the install stood.
      const c = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csv);
      const plans = await client().request<{ items: KubeObject[] }>({
        path: collectionPath(Resources.InstallPlan, ns),
      });
      const status = (o: unknown) => JSON.stringify((o as { status?: unknown } | undefined)?.status);
      throw new Error(
        `${String(err)}\nCSV status: ${status(c)}\nInstallPlans: ${plans.items.map(status).join('\n')}`,
      );
    });

  it('sap-btp-operator in its own namespace: certificate, Service, mounts, webhooks scoped to the namespace; uninstall removes them', async () => {
    const ns = await freshNamespace('sapbtp');
    const og = await subscribe(ns, 'sap-btp-operator', { targetNamespaces: [ns] });
    const csvName = 'sap-btp-operator.v0.1.6';
    const csv = await succeeded(ns, csvName);
    const c = client();
    const service = 'sap-btp-operator-controller-manager-service';
    const secretName = `${service}-cert`;
    const groupLabel = `olm.operatorgroup.uid/${og.metadata.uid ?? ''}`;

    // The OperatorGroup controller labelled the target namespace as OLM does.
    const namespace = await get<KubeObject>(R.Namespace, '', ns);
    expect(namespace?.metadata?.labels?.[groupLabel]).toBe('');

    const secret = await get<Secret>(R.Secret, ns, secretName);
    const caPEM = expectServingSecret(secret, service, ns);
    expect(secret?.metadata?.ownerReferences?.[0]).toMatchObject({
      kind: 'ClusterServiceVersion',
      uid: csv.metadata.uid,
    });

    const svc = await get<KubeObject & { spec: { ports: unknown[]; selector: Record<string, string> } }>(
      R.Service,
      ns,
      service,
    );
    expect(svc?.spec.ports).toEqual([{ name: '443', port: 443, protocol: 'TCP', targetPort: 9443 }]);
    expect(svc?.spec.selector).toEqual({ 'control-plane': 'controller-manager' });

    const deployment = await get<Deployment>(R.Deployment, ns, 'sap-btp-operator-controller-manager');
    expectMounted(deployment, secretName, caPEM);

    const { validating, mutating } = await clusterObjectsOf(c, ns);
    const byGenerateName = (configs: WebhookConfiguration[]) =>
      Object.fromEntries(
        configs.map((w) => [w.metadata?.labels?.['olm.webhook-description-generate-name'], w]),
      );
    const v = byGenerateName(validating);
    const m = byGenerateName(mutating);
    expect(Object.keys(v)).toEqual(['vwebhook.kb.io']);
    expect(Object.keys(m).sort()).toEqual(['mwebhook.kb.io', 'mwebhookbinding.kb.io']);
    for (const config of [...validating, ...mutating]) {
      expect(config.metadata?.labels).toMatchObject({
        'olm.owner': csvName,
        'olm.owner.kind': 'ClusterServiceVersion',
      });
      expect(config.webhooks).toHaveLength(1);
      const [w] = config.webhooks;
      expect(b64(w?.clientConfig.caBundle)).toBe(caPEM);
      expect(w?.clientConfig.service).toMatchObject({ name: service, namespace: ns, port: 443 });
      // Scoped to the group's namespaces: no cluster-wide webhook.
      expect(w?.namespaceSelector).toEqual({ matchLabels: { [groupLabel]: '' } });
    }
    expect(m['mwebhook.kb.io']?.webhooks[0]).toMatchObject({
      name: 'mwebhook.kb.io',
      failurePolicy: 'Fail',
      clientConfig: { service: { path: '/mutate-services-cloud-sap-com-v1alpha1-serviceinstance' } },
    });
    expect(v['vwebhook.kb.io']?.webhooks[0]?.rules).toEqual([
      {
        apiGroups: ['services.cloud.sap.com'],
        apiVersions: ['v1alpha1'],
        operations: ['CREATE', 'UPDATE'],
        resources: ['servicebindings'],
        scope: '*',
      },
    ]);

    expect(csv.status?.certsLastUpdated).toBeDefined();
    const rotateAt = Date.parse(csv.status?.certsRotateAt ?? '');
    const expires = Date.parse(new X509Certificate(b64(secret?.data?.['tls.crt'])).validTo);
    expect(rotateAt).toBe(expires - 24 * 3_600_000);
    const delegator = `${service}.${ns}-system:auth-delegator`;
    expect(await get(R.ClusterRoleBinding, '', delegator)).toBeDefined();
    expect(await get(R.RoleBinding, 'kube-system', `${service}.${ns}-auth-reader`)).toBeDefined();

    // A webhook configuration deleted by hand is noticed (here on the CSV's next reconcile, which
    // a change of the CSV brings forward) and put back, with the same certificate.
    const deleted = v['vwebhook.kb.io']?.metadata?.name ?? '';
    await c.request({ method: 'DELETE', path: objectPath(R.Validating, deleted) });
    await c.request({
      method: 'PATCH',
      path: csvPath(ns, csvName),
      // A label: the CSV's annotations go into the pod template, and would reinstall it anyway.
      body: { metadata: { labels: { 'test.bosun.dev/poke': 'webhook-deleted' } } },
      contentType: 'application/merge-patch+json',
    });
    const healed = await eventually(
      'the webhook configuration back and the CSV Succeeded again',
      async () => {
        const back = await get<WebhookConfiguration>(R.Validating, '', deleted);
        const now = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csvName);
        const history = now?.status?.conditions ?? [];
        return back &&
          now?.status?.phase === 'Succeeded' &&
          history.length > (csv.status?.conditions ?? []).length
          ? { back, history }
          : undefined;
      },
      60_000,
    );
    expect(b64(healed.back.webhooks[0]?.clientConfig.caBundle)).toBe(caPEM);
    expect(
      healed.history.find((h) => h.reason === 'ComponentUnhealthy'),
      JSON.stringify(healed.history),
    ).toMatchObject({
      phase: 'Failed',
      message: `installing: ValidatingWebhookConfiguration ${deleted} for webhook vwebhook.kb.io not found`,
    });

    // A certificate gone is issued again (OLM's NeedsCertRotation), with a new CA everywhere.
    const beforeRotation = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csvName);
    await c.request({ method: 'DELETE', path: objectPath(R.Secret, secretName, ns) });
    await c.request({
      method: 'PATCH',
      path: csvPath(ns, csvName),
      body: { metadata: { labels: { 'test.bosun.dev/poke': 'secret-deleted' } } },
      contentType: 'application/merge-patch+json',
    });
    const rotated = await eventually(
      'a new certificate in the Secret, the webhooks and the pods, and the CSV Succeeded',
      async () => {
        const s = await get<Secret>(R.Secret, ns, secretName);
        const ca = b64(s?.data?.olmCAKey);
        const now = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, csvName);
        const configs = await clusterObjectsOf(c, ns);
        const current = [...configs.validating, ...configs.mutating].every(
          (w) => b64(w.webhooks[0]?.clientConfig.caBundle) === ca,
        );
        return s && ca !== caPEM && current && now?.status?.phase === 'Succeeded' ? { s, now } : undefined;
      },
      60_000,
    );
    const newCA = expectServingSecret(rotated.s, service, ns);
    expectMounted(
      await get<Deployment>(R.Deployment, ns, 'sap-btp-operator-controller-manager'),
      secretName,
      newCA,
    );
    const rotation = (rotated.now.status?.conditions ?? []).slice(
      (beforeRotation?.status?.conditions ?? []).length,
    );
    expect(rotation.map((x) => `${x.phase}/${x.reason}`)).toEqual(
      expect.arrayContaining(['Pending/NeedsCertRotation', 'Succeeded/InstallSucceeded']),
    );

    // Uninstall: the CSV goes, and with it everything it created for its webhooks.
    await c.request({
      method: 'DELETE',
      path: objectPath(Resources.Subscription, 'sap-btp-operator', ns),
    });
    await c.request({ method: 'DELETE', path: csvPath(ns, csvName) });
    await eventually(
      'webhook configurations, bindings, Service and Secret removed',
      async () => {
        const left = await clusterObjectsOf(c, ns);
        const gone =
          left.validating.length + left.mutating.length === 0 &&
          (await get(R.ClusterRoleBinding, '', delegator)) === undefined &&
          (await get(R.RoleBinding, 'kube-system', `${service}.${ns}-auth-reader`)) === undefined &&
          (await get(R.Service, ns, service)) === undefined &&
          (await get(R.Secret, ns, secretName)) === undefined;
        return gone ? true : undefined;
      },
      90_000,
    );
  });

  it('cert-manager (AllNamespaces only): conversion webhooks on its CRDs and webhooks for every namespace; uninstall resets the conversions', async () => {
    const ns = await freshNamespace('certm');
    await subscribe(ns, 'cert-manager', {});
    const csvName = 'cert-manager.v1.4.0';
    await succeeded(ns, csvName);
    const c = client();
    const service = 'cert-manager-webhook-service';
    const caPEM = expectServingSecret(await get<Secret>(R.Secret, ns, `${service}-cert`), service, ns);
    expectMounted(await get<Deployment>(R.Deployment, ns, 'cert-manager-webhook'), `${service}-cert`, caPEM);

    const { validating, mutating } = await clusterObjectsOf(c, ns);
    expect(validating.map((w) => w.webhooks[0]?.name)).toEqual(['validate.webhooks.cert-manager.io']);
    expect(mutating.map((w) => w.webhooks[0]?.name)).toEqual(['mutate.webhooks.cert-manager.io']);
    for (const config of [...validating, ...mutating]) {
      // An all-namespaces group: every namespace (the API server's empty selector).
      expect(config.webhooks[0]?.namespaceSelector).toEqual({});
      expect(b64(config.webhooks[0]?.clientConfig.caBundle)).toBe(caPEM);
    }

    const crds = [
      'certificaterequests.cert-manager.io',
      'certificates.cert-manager.io',
      'challenges.acme.cert-manager.io',
      'clusterissuers.cert-manager.io',
      'issuers.cert-manager.io',
      'orders.acme.cert-manager.io',
    ];
    type CRD = KubeObject & {
      spec: {
        conversion?: {
          strategy: string;
          webhook?: {
            clientConfig?: { caBundle?: string; service?: unknown };
            conversionReviewVersions?: string[];
          };
        };
      };
    };
    for (const name of crds) {
      const crd = await get<CRD>(R.CRD, '', name);
      expect(crd?.spec.conversion?.strategy, name).toBe('Webhook');
      expect(crd?.spec.conversion?.webhook?.clientConfig?.service).toEqual({
        namespace: ns,
        name: service,
        path: '/convert',
        port: 443,
      });
      expect(b64(crd?.spec.conversion?.webhook?.clientConfig?.caBundle)).toBe(caPEM);
      expect(crd?.spec.conversion?.webhook?.conversionReviewVersions).toEqual(['v1', 'v1beta1']);
    }

    await c.request({ method: 'DELETE', path: objectPath(Resources.Subscription, 'cert-manager', ns) });
    await c.request({ method: 'DELETE', path: csvPath(ns, csvName) });
    await eventually(
      'webhook configurations removed and conversions reset',
      async () => {
        const left = await clusterObjectsOf(c, ns);
        if (left.validating.length + left.mutating.length > 0) return undefined;
        for (const name of crds) {
          const crd = await get<CRD>(R.CRD, '', name);
          if (crd?.spec.conversion?.strategy !== 'None' || crd.spec.conversion.webhook !== undefined)
            return undefined;
        }
        return true;
      },
      90_000,
    );
  });
});

describe('an operator owning an aggregated API service', () => {
  let h: Harness;
  const touched: string[] = [];
  const group = 'gizmos.testop.bosun.dev';
  const apiService = `v1alpha1.${group}`;
  const service = `${TestOperator.deployment}-service`;

  /** The test operator, also serving the Gizmo API of its own aggregated API server. */
  function apiCSV(version: '0.1.0' | '0.2.0') {
    const csv = testCSV(version);
    return {
      ...csv,
      spec: {
        ...csv.spec,
        apiservicedefinitions: {
          owned: [
            {
              name: 'gizmos',
              group,
              version: 'v1alpha1',
              kind: 'Gizmo',
              displayName: 'Gizmo',
              deploymentName: TestOperator.deployment,
              containerPort: 8443,
            },
          ],
        },
      },
    };
  }

  const start = async () => {
    h = await startInstallControllers();
    h.catalogs.set(
      testCatalogSnapshot([testBundle('0.1.0', apiCSV('0.1.0')), testBundle('0.2.0', apiCSV('0.2.0'))], {
        ...testCatalog,
        name: 'apis',
      }),
    );
  };

  beforeAll(async () => {
    await installOperatorCrds();
    await start();
  });
  afterEach(async () => {
    await removeClusterObjects(touched);
  });
  afterAll(async () => {
    await h?.stop();
  });

  it("labels an OperatorGroup's target namespaces for its webhooks, following its targets and its deletion", async () => {
    const c = h.ctx.client;
    const [ns, other] = [await freshNamespace('oglabel'), await freshNamespace('oglabel')];
    const og = await createOperatorGroup(c, ns, 'og', { targetNamespaces: [ns, other] });
    const label = `olm.operatorgroup.uid/${og.metadata.uid ?? ''}`;
    const labelled = async (names: string[]) => {
      for (const name of [ns, other]) {
        const n = await get<KubeObject>(R.Namespace, '', name);
        if ((n?.metadata?.labels?.[label] === '') !== names.includes(name)) return undefined;
      }
      return true;
    };
    await eventually('both targets labelled', () => labelled([ns, other]));
    await c.request({
      method: 'PATCH',
      path: objectPath(Resources.OperatorGroup, 'og', ns),
      body: { spec: { targetNamespaces: [ns] } },
      contentType: 'application/merge-patch+json',
    });
    await eventually('the label gone from the namespace no longer targeted', () => labelled([ns]));
    await c.request({ method: 'DELETE', path: objectPath(Resources.OperatorGroup, 'og', ns) });
    await eventually('the label gone with the group', () => labelled([]));
  });

  it('registers the APIService with the CA and Service, Succeeds without it being Available, hands it to the upgrade, and uninstall removes it', async () => {
    const c = h.ctx.client;
    const ns = await freshNamespace('apisvc');
    touched.push(ns);
    await createOperatorGroup(c, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(c, ns, { name: 'install-v1', source: 'apis' });
    const v1 = await csvInPhase(c, ns, TestOperator.v1, 'Succeeded', undefined, 120_000);

    const caPEM = expectServingSecret(await get<Secret>(R.Secret, ns, `${service}-cert`), service, ns);
    expectMounted(await get<Deployment>(R.Deployment, ns, TestOperator.deployment), `${service}-cert`, caPEM);
    type APIService = KubeObject & {
      spec: Record<string, unknown> & { caBundle?: string };
      status?: { conditions?: { type: string; status: string }[] };
    };
    const registered = await get<APIService>(R.APIService, '', apiService);
    expect(registered?.spec).toMatchObject({
      group,
      version: 'v1alpha1',
      groupPriorityMinimum: 2000,
      versionPriority: 15,
      service: { namespace: ns, name: service, port: 8443 },
    });
    expect(b64(registered?.spec.caBundle)).toBe(caPEM);
    expect(registered?.metadata?.labels).toMatchObject({
      'olm.owner': TestOperator.v1,
      'olm.owner.namespace': ns,
    });
    // Nothing serves the API on a simulated node: not Available, reported, and not waited for.
    const available = registered?.status?.conditions?.find((x) => x.type === 'Available');
    expect(available?.status).not.toBe('True');
    const events = await eventsFor(c, ns, TestOperator.v1);
    const warning = events.find((e) => e.reason === 'APIServiceUnavailable');
    expect(warning?.type).toBe('Warning');
    expect(warning?.message).toContain(`APIService ${apiService} is not Available`);
    expect(v1.status?.certsRotateAt).toBeDefined();

    // A deleted APIService fails the CSV with OLM's reason until it is put back.
    await c.request({ method: 'DELETE', path: objectPath(R.APIService, apiService) });
    await c.request({
      method: 'PATCH',
      path: csvPath(ns, TestOperator.v1),
      body: { metadata: { labels: { 'test.bosun.dev/poke': 'apiservice-deleted' } } },
      contentType: 'application/merge-patch+json',
    });
    const healed = await eventually(
      'the APIService back and the CSV Succeeded again',
      async () => {
        const back = await get<APIService>(R.APIService, '', apiService);
        const now = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, TestOperator.v1);
        const history = now?.status?.conditions ?? [];
        return back &&
          now?.status?.phase === 'Succeeded' &&
          history.length > (v1.status?.conditions ?? []).length
          ? history
          : undefined;
      },
      60_000,
    );
    expect(healed.map((x) => `${x.phase}/${x.reason}`)).toEqual(
      expect.arrayContaining(['Failed/APIServiceResourceIssue', 'Pending/APIServiceResourcesNeedReinstall']),
    );
    expect(healed.find((x) => x.reason === 'APIServiceResourceIssue')?.message).toBe(
      `APIService ${apiService} not found`,
    );

    // The upgrade takes the APIService over from the CSV it replaces.
    await createInstallPlan(c, ns, { name: 'install-v2', csv: TestOperator.v2, source: 'apis' });
    await csvInPhase(c, ns, TestOperator.v2, 'Succeeded', undefined, 120_000);
    await eventually('the old CSV deleted and the APIService owned by the new one', async () => {
      const old = await get(Resources.ClusterServiceVersion, ns, TestOperator.v1);
      const now = await get<APIService>(R.APIService, '', apiService);
      return old === undefined && now?.metadata?.labels?.['olm.owner'] === TestOperator.v2 ? true : undefined;
    });

    await c.request({ method: 'DELETE', path: csvPath(ns, TestOperator.v2) });
    await eventually(
      'the APIService removed with the CSV',
      async () => ((await get(R.APIService, '', apiService)) === undefined ? true : undefined),
      60_000,
    );
  });

  it('a certificate lost while the manager was down is replaced: new CA in the Secret, the APIService and the pods', async () => {
    const c = h.ctx.client;
    const ns = await freshNamespace('rotate');
    touched.push(ns);
    await createOperatorGroup(c, ns, 'og', { targetNamespaces: [ns] });
    await createInstallPlan(c, ns, { name: 'install-v1', source: 'apis' });
    const before = await csvInPhase(c, ns, TestOperator.v1, 'Succeeded', undefined, 120_000);
    const oldCA = expectServingSecret(await get<Secret>(R.Secret, ns, `${service}-cert`), service, ns);

    await h.stop();
    await c.request({ method: 'DELETE', path: objectPath(R.Secret, `${service}-cert`, ns) });
    await start();

    const after = await eventually(
      'a new certificate everywhere and the CSV Succeeded',
      async () => {
        const secret = await get<Secret>(R.Secret, ns, `${service}-cert`);
        const api = await get<KubeObject & { spec: { caBundle?: string } }>(R.APIService, '', apiService);
        const csv = await get<ClusterServiceVersion>(Resources.ClusterServiceVersion, ns, TestOperator.v1);
        const ca = b64(secret?.data?.olmCAKey);
        return secret && ca !== oldCA && b64(api?.spec.caBundle) === ca && csv?.status?.phase === 'Succeeded'
          ? { secret, csv }
          : undefined;
      },
      90_000,
    );
    const newCA = expectServingSecret(after.secret, service, ns);
    expectMounted(await get<Deployment>(R.Deployment, ns, TestOperator.deployment), `${service}-cert`, newCA);
    const history = after.csv.status?.conditions ?? [];
    // As OLM: the Secret of an API service missing is a resource issue, then a reinstall.
    expect(
      history.slice((before.status?.conditions ?? []).length).map((x) => `${x.phase}/${x.reason}`),
    ).toEqual([
      'Failed/APIServiceResourceIssue',
      'Pending/APIServiceResourcesNeedReinstall',
      'InstallReady/AllRequirementsMet',
      'Installing/InstallWaiting',
      'Succeeded/InstallSucceeded',
    ]);
    expect(Date.parse(after.csv.status?.certsLastUpdated ?? '')).toBeGreaterThanOrEqual(
      Date.parse(before.status?.certsLastUpdated ?? ''),
    );

    await c.request({ method: 'DELETE', path: csvPath(ns, TestOperator.v1) });
    await eventually('the APIService removed with the CSV', async () =>
      (await get(R.APIService, '', apiService)) === undefined ? true : undefined,
    );
  });
});
