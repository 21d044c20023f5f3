/**
 * What a CSV needs so that the API server can call its operator: for every Deployment named by a
 * `spec.webhookdefinitions[]` or an owned `spec.apiservicedefinitions.owned[]` entry, OLM
 * (pkg/controller/install/certresources.go, webhook.go, apiservice.go) installs
 * - a Service `<deployment>-service` selecting the Deployment's pods, one port per distinct
 *   `containerPort` (default 443) with the webhook's `targetPort` (default: the same port);
 * - a Secret `<service>-cert` with a CA and a serving certificate for the Service
 *   (./certificates.ts), and a Role and RoleBinding letting the pods' ServiceAccount read it;
 * - a ClusterRoleBinding to `system:auth-delegator` and a RoleBinding in kube-system to
 *   `extension-apiserver-authentication-reader`, which an aggregated API server needs to
 *   delegate authentication and authorization;
 * - the certificate mounted into every container of the Deployment at the paths operator
 *   frameworks read it from (`/apiserver.local.config/certificates/apiserver.{crt,key}` and
 *   `/tmp/k8s-webhook-server/serving-certs/tls.{crt,key}`), with the CA's hash on the pod
 *   template so a new CA rolls the pods;
 * - after the Deployments: the webhook configurations and CRD conversion settings
 *   (./webhooks.ts) and the APIServices (./apiservices.ts), each with the CA as `caBundle`.
 * The Service name replaces dots in the Deployment name with dashes (a Service name is a DNS
 * label); OLM does that only where webhooks refer to the Service, so Bosun stays consistent
 * where OLM would point a webhook at a Service it never created.
 * Pure functions over plain data; the CSV controller reads the Secrets and applies the objects.
 */
import type { V1DeploymentSpec, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { CSVReason } from '../apis/conditions.js';
import type { KubeObject } from '../apis/meta.js';
import type {
  APIServiceDescription,
  ClusterServiceVersion,
  OperatorGroup,
  WebhookDescription,
} from '../apis/operators.js';
import { WebhookAdmissionType } from '../apis/operators.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';
import { apiServiceName, apiServiceObjects, checkAPIServices } from './apiservices.js';
import {
  CAHashAnnotation,
  CAPEMKey,
  caHash,
  type ServingCertificate,
  servingHostnames,
} from './certificates.js';
import type { StrategyCheck } from './health.js';
import type { Resource } from '../olm/kinds.js';
import { type CSVIdentity, csvOwnerReference, ownerLabels } from './ownership.js';
import {
  checkConversions,
  checkWebhookConfigurations,
  type ConversionPatch,
  conversionPatches,
  type CRDLike,
  validateWebhooks,
  webhookConfigurations,
  webhookNamespaceSelector,
} from './webhooks.js';

/** The port a webhook or API service is served on when its description names none. */
export const DefaultServingPort = 443;

/** The volumes OLM adds to a serving Deployment, and where they are mounted. */
export const ServingMount = {
  APIService: {
    volume: 'apiservice-cert',
    path: '/apiserver.local.config/certificates',
    items: [
      { key: 'tls.crt', path: 'apiserver.crt' },
      { key: 'tls.key', path: 'apiserver.key' },
    ],
  },
  Webhook: {
    volume: 'webhook-cert',
    path: '/tmp/k8s-webhook-server/serving-certs',
    items: [
      { key: 'tls.crt', path: 'tls.crt' },
      { key: 'tls.key', path: 'tls.key' },
    ],
  },
} as const;

/** Where the roles an aggregated API server is bound to live. */
const KubeSystem = 'kube-system';

export function serviceNameFor(deployment: string): string {
  return `${deployment.replaceAll('.', '-')}-service`;
}

export function secretNameFor(service: string): string {
  return `${service}-cert`;
}

export interface ServicePort {
  name: string;
  port: number;
  targetPort: number | string;
}

/** One Deployment that serves webhooks or API services, and what it serves. */
export interface ServingDeployment {
  deployment: string;
  namespace: string;
  service: string;
  secret: string;
  /** The hosts its certificate names. */
  hosts: string[];
  ports: ServicePort[];
  /** The pod labels the Service selects (the Deployment's `selector.matchLabels`). */
  selector: Record<string, string>;
  /** The pods' ServiceAccount (`default` when the template names none, as OLM sets it). */
  serviceAccount: string;
  webhooks: WebhookDescription[];
  apiServices: APIServiceDescription[];
}

/** A problem with a CSV's webhook or API service descriptions, and the CSV reason OLM reports. */
export interface ServingProblem extends Problem {
  reason: CSVReason;
}

/**
 * The Deployments of a CSV that serve webhooks or owned API services, in the install strategy's
 * order, or every problem with the descriptions: OLM's rules (a repeated `generateName`, rules
 * matching every API group, OLM's own group or the webhook configurations themselves fail the
 * CSV with InvalidWebhookDescription; a conversion webhook on a CSV that supports more than
 * AllNamespaces, without CRDs or for a CRD the CSV does not own fails it with
 * InstallComponentFailed), and a description naming no Deployment of the strategy.
 */
export function servingDeployments(
  csv: ClusterServiceVersion,
): Result<ServingDeployment[], ServingProblem[]> {
  const object = `ClusterServiceVersion/${csv.metadata.name ?? '?'}`;
  const namespace = csv.metadata.namespace ?? '';
  const webhooks = csv.spec.webhookdefinitions ?? [];
  const apiServices = csv.spec.apiservicedefinitions?.owned ?? [];
  if (webhooks.length === 0 && apiServices.length === 0) return ok([]);

  const problems: ServingProblem[] = validateWebhooks(csv, object);
  const strategy = csv.spec.install.spec?.deployments ?? [];
  const names = new Set(strategy.map((d) => d.name));
  apiServices.forEach((a, i) => {
    if (!a.deploymentName || !names.has(a.deploymentName)) {
      problems.push({
        object,
        field: `spec.apiservicedefinitions.owned[${i}].deploymentName`,
        message: `${JSON.stringify(a.deploymentName ?? '')} names no Deployment of the install strategy (${[...names].join(', ')}): it must name the Deployment that serves ${a.version}.${a.group}`,
        reason: CSVReason.InvalidInstallStrategy,
      });
    }
  });
  if (problems.length > 0) return fail(problems);

  const out: ServingDeployment[] = [];
  for (const d of strategy) {
    const mine = webhooks.filter((w) => w.deploymentName === d.name);
    const apis = apiServices.filter((a) => a.deploymentName === d.name);
    if (mine.length === 0 && apis.length === 0) continue;
    const service = serviceNameFor(d.name);
    out.push({
      deployment: d.name,
      namespace,
      service,
      secret: secretNameFor(service),
      hosts: servingHostnames(service, namespace),
      ports: servicePorts(apis, mine),
      selector: { ...d.spec.selector?.matchLabels },
      serviceAccount: d.spec.template.spec?.serviceAccountName || 'default',
      webhooks: mine,
      apiServices: apis,
    });
  }
  return ok(out);
}

/**
 * One port per distinct port number, API services first, as OLM lists them. Two descriptions
 * that put different target ports behind one port cannot both be served; the first wins.
 */
function servicePorts(
  apis: readonly APIServiceDescription[],
  hooks: readonly WebhookDescription[],
): ServicePort[] {
  const ports: ServicePort[] = [];
  const add = (port: number, targetPort: number | string) => {
    if (!ports.some((p) => p.port === port)) ports.push({ name: String(port), port, targetPort });
  };
  for (const a of apis) {
    const port = servingPort(a.containerPort);
    add(port, port);
  }
  for (const w of hooks) {
    const port = servingPort(w.containerPort);
    add(port, w.targetPort ?? port);
  }
  return ports;
}

export function servingPort(containerPort: number | undefined): number {
  return containerPort !== undefined && containerPort > 0 ? containerPort : DefaultServingPort;
}

/** What a serving Deployment's pod template gets: its certificate Secret and the CA's hash. */
export interface DeploymentCertificate {
  secret: string;
  caHash: string;
}

export function deploymentCertificate(serving: ServingDeployment, certificate: ServingCertificate) {
  return { secret: serving.secret, caHash: caHash(certificate.caPEM) };
}

/**
 * A copy of `spec` with the certificate mounted as OLM mounts it: the two Secret volumes
 * (replacing volumes of the same name), a mount of each in every container (replacing a mount at
 * the same path; a container that already mounts a volume of that name keeps its own mount), the
 * ServiceAccount `default` when none is named, and the CA's hash on the pod template.
 */
export function mountServingCertificate(
  spec: V1DeploymentSpec,
  cert: DeploymentCertificate,
): V1DeploymentSpec {
  const out = structuredClone(spec);
  const pod = (out.template.spec ??= { containers: [] });
  if (!pod.serviceAccountName) pod.serviceAccountName = 'default';
  for (const m of [ServingMount.APIService, ServingMount.Webhook]) {
    const volume: V1Volume = {
      name: m.volume,
      secret: { secretName: cert.secret, items: m.items.map((i) => ({ ...i })) },
    };
    const volumes = pod.volumes ?? [];
    const at = volumes.findIndex((v) => v.name === volume.name);
    pod.volumes = at >= 0 ? volumes.map((v, i) => (i === at ? volume : v)) : [...volumes, volume];
    const mount: V1VolumeMount = { name: m.volume, mountPath: m.path };
    pod.containers = (pod.containers ?? []).map((c) => {
      const mounts = c.volumeMounts ?? [];
      const i = mounts.findIndex((x) => x.name === mount.name || x.mountPath === mount.mountPath);
      if (i < 0) return { ...c, volumeMounts: [...mounts, mount] };
      if (mounts[i]?.name === mount.name) return c;
      return { ...c, volumeMounts: mounts.map((x, j) => (j === i ? mount : x)) };
    });
  }
  out.template.metadata = {
    ...out.template.metadata,
    annotations: { ...out.template.metadata?.annotations, [CAHashAnnotation]: cert.caHash },
  };
  return out;
}

/**
 * The Service, the certificate's Secret and the RBAC around them for one serving Deployment.
 * Namespaced objects are owned by the CSV; all carry the owner labels (also the binding in
 * kube-system and the ClusterRoleBinding, so uninstall finds them).
 *
 * The two cluster-wide bindings are named `<service>.<namespace>-system:auth-delegator` and
 * `<service>.<namespace>-auth-reader`. OLM leaves the namespace out, so the same operator
 * installed in two namespaces would share (and on uninstall delete) one binding.
 */
export function servingObjects(
  csv: CSVIdentity,
  serving: ServingDeployment,
  certificate: ServingCertificate,
): Resource[] {
  const { namespace, service, secret } = serving;
  const labels = ownerLabels(csv);
  const owned = { namespace, labels, ownerReferences: [csvOwnerReference(csv)] };
  const subject = { kind: 'ServiceAccount', name: serving.serviceAccount, namespace };
  const rbac = 'rbac.authorization.k8s.io';
  const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: service, ...owned },
      spec: { ports: serving.ports.map((p) => ({ ...p })), selector: { ...serving.selector } },
    },
    {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { name: secret, ...owned, annotations: { [CAHashAnnotation]: caHash(certificate.caPEM) } },
      data: {
        'tls.crt': b64(certificate.certPEM),
        'tls.key': b64(certificate.keyPEM),
        [CAPEMKey]: b64(certificate.caPEM),
      },
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'Role',
      metadata: { name: secret, ...owned },
      rules: [{ apiGroups: [''], resources: ['secrets'], resourceNames: [secret], verbs: ['get'] }],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name: secret, ...owned },
      roleRef: { apiGroup: rbac, kind: 'Role', name: secret },
      subjects: [subject],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRoleBinding',
      metadata: { name: `${service}.${namespace}-system:auth-delegator`, labels },
      roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: 'system:auth-delegator' },
      subjects: [subject],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name: `${service}.${namespace}-auth-reader`, namespace: KubeSystem, labels },
      roleRef: { apiGroup: rbac, kind: 'Role', name: 'extension-apiserver-authentication-reader' },
      subjects: [subject],
    },
  ];
}

export interface ServingInput {
  /** The CSV as it is on the cluster (its uid owns what is created). */
  csv: ClusterServiceVersion;
  /** The namespace's OperatorGroup: its targets scope the admission webhooks. */
  operatorGroup: Pick<OperatorGroup, 'metadata' | 'spec'>;
  serving: readonly ServingDeployment[];
  /** The certificate of each serving Deployment, by Deployment name; one without is left out. */
  certificates: ReadonlyMap<string, ServingCertificate>;
  /** The Subscription's `spec.config.annotations`, which OLM puts on the APIServices it creates. */
  apiServiceAnnotations?: Record<string, string>;
}

export interface ServingObjects {
  /** Applied before the Deployments: Services, certificate Secrets and their RBAC. */
  beforeDeployments: Resource[];
  /** Applied after the Deployments: webhook configurations and APIServices. */
  afterDeployments: Resource[];
  /** `spec.conversion` of owned CRDs served by a conversion webhook. */
  conversions: ConversionPatch[];
}

/** Everything a CSV's webhooks and API services need, for the Deployments that have a certificate. */
export function renderServing(input: ServingInput): ServingObjects {
  const csv: CSVIdentity = {
    name: input.csv.metadata.name ?? '',
    namespace: input.csv.metadata.namespace ?? '',
    uid: input.csv.metadata.uid ?? '',
  };
  const out: ServingObjects = { beforeDeployments: [], afterDeployments: [], conversions: [] };
  const selector = webhookNamespaceSelector(input.operatorGroup);
  for (const s of input.serving) {
    const certificate = input.certificates.get(s.deployment);
    if (certificate === undefined) continue;
    out.beforeDeployments.push(...servingObjects(csv, s, certificate));
    const served = { service: s.service, caPEM: certificate.caPEM };
    out.afterDeployments.push(
      ...webhookConfigurations({
        csv,
        webhooks: s.webhooks.filter((w) => w.type !== WebhookAdmissionType.ConversionWebhook),
        served,
        namespaceSelector: selector,
      }),
      ...apiServiceObjects({
        csv,
        apiServices: s.apiServices,
        served,
        annotations: input.apiServiceAnnotations,
      }),
    );
    out.conversions.push(
      ...conversionPatches({
        namespace: csv.namespace,
        webhooks: s.webhooks.filter((w) => w.type === WebhookAdmissionType.ConversionWebhook),
        served,
      }),
    );
  }
  // Several descriptions of one group and version (one per kind) share one APIService: the
  // first Deployment to serve it keeps it.
  const seen = new Set<string>();
  out.afterDeployments = out.afterDeployments.filter((o) => {
    const key = `${o.kind}/${o.metadata.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return out;
}

/** What the CSV controller read of the serving objects. */
export interface LiveServing {
  /** Secrets by name (only the serving ones were read); undefined when missing. */
  secrets: ReadonlyMap<string, KubeObject | undefined>;
  /** Services by name; undefined when missing. */
  services: ReadonlyMap<string, KubeObject | undefined>;
  /** The webhook configurations that carry the CSV's owner labels (both kinds). */
  webhookConfigurations: readonly KubeObject[];
  /** APIServices by name; undefined when missing. */
  apiServices: ReadonlyMap<string, KubeObject | undefined>;
  crd(name: string): CRDLike | undefined;
}

export type ServingCheck =
  | {
      ok: true;
      /** Owned APIServices that exist as rendered but whose Available condition is not True. */
      unavailableAPIServices: { name: string; message: string }[];
    }
  | {
      ok: false;
      /** `missing` objects are applied again; `outdated` ones make the CSV reinstall. */
      state: 'missing' | 'outdated';
      /** The serving Deployment it concerns. */
      deployment: string;
      /**
       * Whether it concerns an owned API service (its APIService, or the Service or Secret of a
       * Deployment serving one), for which OLM has reasons of its own.
       */
      apiService: boolean;
      message: string;
    };

/**
 * Whether the serving objects are on the cluster as rendered: each Service and Secret, each
 * webhook configuration with the description's hash, the namespace selector and the CA, each
 * conversion webhook on its CRD, each APIService pointing at the Service with the CA. An
 * APIService that is not Available does not fail the check: it is reported, so a cluster whose
 * pods do not run (a simulated node) can still install an operator that serves one.
 */
export function checkServing(
  serving: readonly ServingDeployment[],
  desired: ServingObjects,
  live: LiveServing,
): ServingCheck {
  /** The Deployment serving what matches, for the message's sake. */
  const servedBy = (match: (s: ServingDeployment) => boolean) => serving.find(match)?.deployment ?? '';
  const servesAPIs = (deployment: string) =>
    serving.some((s) => s.deployment === deployment && s.apiServices.length > 0);
  const failed = (
    state: 'missing' | 'outdated',
    deployment: string,
    message: string,
    apiService = servesAPIs(deployment),
  ): ServingCheck => ({ ok: false, state, deployment, apiService, message });
  for (const s of serving) {
    if (live.secrets.get(s.secret) === undefined) {
      return failed('missing', s.deployment, `secret ${s.secret} for deployment ${s.deployment} not found`);
    }
    if (live.services.get(s.service) === undefined) {
      return failed('missing', s.deployment, `service ${s.service} for deployment ${s.deployment} not found`);
    }
  }
  const webhook = checkWebhookConfigurations(desired.afterDeployments, live.webhookConfigurations);
  if (webhook !== undefined) {
    const by = servedBy((s) => s.webhooks.some((w) => w.generateName === webhook.webhook));
    return failed(webhook.state, by, webhook.message, false);
  }
  const conversion = checkConversions(desired.conversions, live.crd);
  if (conversion !== undefined) {
    const by = servedBy((s) => s.webhooks.some((w) => (w.conversionCRDs ?? []).includes(conversion.crd)));
    return failed(conversion.state, by, conversion.message, false);
  }
  const apis = checkAPIServices(desired.afterDeployments, live.apiServices);
  if (!apis.ok) {
    const by = servedBy((s) => s.apiServices.some((a) => apiServiceName(a) === apis.name));
    return failed(apis.state, by, apis.message, true);
  }
  return { ok: true, unavailableAPIServices: apis.unavailable };
}

/**
 * The strategy check with the serving objects taken into account, for the CSV's phase logic:
 * Deployments first; then a missing object is a missing component (applied again while
 * installing; an installed CSV fails with ComponentUnhealthy until it is back), and an outdated
 * one is reported like an updated Deployment (an installed CSV reinstalls).
 */
export function withServingCheck(strategy: StrategyCheck, serving: ServingCheck): StrategyCheck {
  if (!strategy.installed || serving.ok) return strategy;
  return {
    installed: false,
    reason: serving.state === 'missing' ? 'ComponentMissing' : 'DeploymentUpdated',
    deployment: serving.deployment,
    message: serving.message,
    unrecoverable: false,
    needsApply: true,
  };
}
