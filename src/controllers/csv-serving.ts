/**
 * The CSV controller's reads and writes for the webhooks and API services a CSV declares; what
 * they should be is computed in src/install/serving.ts (and ./webhooks.ts, ./apiservices.ts,
 * ./certificates.ts there). Per reconcile, only for CSVs that declare any:
 * 1. observe: the certificate Secret of each serving Deployment (a GET each; Secrets have no
 *    informer), judged fresh or due for rotation at the clock's now;
 * 2. check: the Services, webhook configurations (by the CSV's owner labels), APIServices and
 *    CRD conversions against what the current certificates render;
 * 3. decide: invalid descriptions fail the CSV (OLM's reasons), an APIService another operator
 *    owns fails it with OwnerConflict, and certificates due for rotation send an installed CSV
 *    back to Pending (NeedsCertRotation) so it reinstalls with new ones;
 * 4. install: new certificates where needed, then the objects around the Deployments.
 */
import type { KubeObject, ResourceType } from '../apis/meta.js';
import { CSVReason } from '../apis/conditions.js';
import type { ClusterServiceVersion, ClusterServiceVersionStatus, OperatorGroup } from '../apis/operators.js';
import { CSVPhase } from '../apis/operators.js';
import { apiServiceName, apiServiceOwnerConflict } from '../install/apiservices.js';
import {
  type CertificateVerdict,
  issueServingCertificate,
  type ServingCertificate,
  checkServingCertificate,
} from '../install/certificates.js';
import { ownerSelector } from '../install/ownership.js';
import {
  checkServing,
  type DeploymentCertificate,
  deploymentCertificate,
  type ServingCheck,
  servingDeployments,
  type ServingDeployment,
  type ServingObjects,
  type ServingProblem,
  renderServing,
} from '../install/serving.js';
import { orphanedConversions, staleWebhookConfigurations } from '../install/webhooks.js';
import { objectKey } from '../kube/cache.js';
import { collectionPath, objectPath } from '../kube/client.js';
import { formatTime } from '../kube/conditions.js';
import { isNotFound } from '../kube/errors.js';
import { formatProblem, type Result } from '../util/result.js';
import type { CSVContext } from './csv.js';
import type { Writer } from './operatorgroup-scope.js';
import type { CSVDecision } from './csv-phase.js';
import { deleteIfPresent, getIfPresent, mergePatch } from './objects.js';

const resource = (group: string, kind: string, plural: string, namespaced: boolean): ResourceType => ({
  group,
  version: 'v1',
  kind,
  plural,
  namespaced,
});

/** The kinds this file reads and writes. */
export const ServingResources = {
  Secret: resource('', 'Secret', 'secrets', true),
  Service: resource('', 'Service', 'services', true),
  ValidatingWebhookConfiguration: resource(
    'admissionregistration.k8s.io',
    'ValidatingWebhookConfiguration',
    'validatingwebhookconfigurations',
    false,
  ),
  MutatingWebhookConfiguration: resource(
    'admissionregistration.k8s.io',
    'MutatingWebhookConfiguration',
    'mutatingwebhookconfigurations',
    false,
  ),
  APIService: resource('apiregistration.k8s.io', 'APIService', 'apiservices', false),
  CustomResourceDefinition: resource(
    'apiextensions.k8s.io',
    'CustomResourceDefinition',
    'customresourcedefinitions',
    false,
  ),
} as const;

/** The cluster-scoped kinds a CSV's serving owns, found by its owner labels at uninstall. */
export const ServingClusterResources = [
  ServingResources.ValidatingWebhookConfiguration,
  ServingResources.MutatingWebhookConfiguration,
  ServingResources.APIService,
] as const;

/**
 * A CSV that serves webhooks or API services is looked at again at least this often: nothing
 * watches webhook configurations, APIServices or Secrets here, so this is how one deleted or
 * changed by hand comes back (OLM relies on its informers' periodic resync the same way).
 */
export const ServingRecheckMs = 10 * 60_000;

export interface ServingState {
  plan: Result<ServingDeployment[], ServingProblem[]>;
  serving: ServingDeployment[];
  /** The certificate Secrets by name (undefined: missing). */
  secrets: Map<string, KubeObject | undefined>;
  /** The stored certificate of each serving Deployment, by Deployment name. */
  verdicts: Map<string, CertificateVerdict>;
}

/** Step 1: which Deployments serve, and the certificates stored for them. */
export async function observeServing(ctx: CSVContext, csv: ClusterServiceVersion): Promise<ServingState> {
  const plan = servingDeployments(csv);
  const serving = plan.ok ? plan.value : [];
  const secrets = new Map<string, KubeObject | undefined>();
  const verdicts = new Map<string, CertificateVerdict>();
  const now = ctx.clock.now();
  for (const s of serving) {
    const secret = await getIfPresent<KubeObject & { data?: Record<string, string> }>(
      ctx.client,
      objectPath(ServingResources.Secret, s.secret, s.namespace),
    );
    secrets.set(s.secret, secret);
    verdicts.set(
      s.deployment,
      secret === undefined
        ? { fresh: false, reason: `secret ${s.secret} not found` }
        : checkServingCertificate(secret.data, s.hosts, now),
    );
  }
  return { plan, serving, secrets, verdicts };
}

/** The certificates the cluster holds now (also those due for rotation), by Deployment. */
function storedCertificates(state: ServingState): Map<string, ServingCertificate> {
  const out = new Map<string, ServingCertificate>();
  for (const [deployment, v] of state.verdicts) {
    const cert = v.fresh ? v.certificate : v.current;
    if (cert !== undefined) out.set(deployment, cert);
  }
  return out;
}

function mounts(
  state: ServingState,
  certificates: ReadonlyMap<string, ServingCertificate>,
): Record<string, DeploymentCertificate> {
  const out: Record<string, DeploymentCertificate> = {};
  for (const s of state.serving) {
    const cert = certificates.get(s.deployment);
    if (cert !== undefined) out[s.deployment] = deploymentCertificate(s, cert);
  }
  return out;
}

/** What the Deployments mount as the cluster stands (for rendering them to compare). */
export function storedMounts(state: ServingState): Record<string, DeploymentCertificate> {
  return mounts(state, storedCertificates(state));
}

export interface ServingObservation {
  check: ServingCheck;
  /** Why the CSV may not take over an APIService, when it may not. */
  conflict?: string;
}

/** Step 2: the serving objects on the cluster against what the stored certificates render. */
export async function checkServingObjects(
  ctx: CSVContext,
  csv: ClusterServiceVersion,
  operatorGroup: OperatorGroup,
  state: ServingState,
  apiServiceAnnotations: Record<string, string> | undefined,
): Promise<ServingObservation> {
  if (state.serving.length === 0) return { check: { ok: true, unavailableAPIServices: [] } };
  const namespace = csv.metadata.namespace ?? '';
  const desired = renderServing({
    csv,
    operatorGroup,
    serving: state.serving,
    certificates: storedCertificates(state),
    apiServiceAnnotations,
  });
  const services = new Map<string, KubeObject | undefined>();
  for (const s of state.serving) {
    services.set(
      s.service,
      await getIfPresent(ctx.client, objectPath(ServingResources.Service, s.service, namespace)),
    );
  }
  const webhookConfigurations = state.serving.some((s) => s.webhooks.length > 0)
    ? await ownedWebhookConfigurations(ctx, { name: csv.metadata.name ?? '', namespace })
    : [];
  const apiServices = new Map<string, KubeObject | undefined>();
  let conflict: string | undefined;
  for (const desc of state.serving.flatMap((s) => s.apiServices)) {
    const name = apiServiceName(desc);
    const live = await getIfPresent(ctx.client, objectPath(ServingResources.APIService, name));
    apiServices.set(name, live);
    conflict ??= apiServiceOwnerConflict(
      live,
      csv,
      (ns, n) => ctx.informers.csvs.get(objectKey(ns, n))?.status?.phase,
    );
  }
  const check = checkServing(state.serving, desired, {
    secrets: state.secrets,
    services,
    webhookConfigurations,
    apiServices,
    crd: (name) => ctx.informers.crds.get(name),
  });
  return conflict === undefined ? { check } : { check, conflict };
}

const CertRotationMessage = 'CSV owns resources that require a cert refresh';

/**
 * Step 3: the phase decision with the serving objects' verdicts, once the OperatorGroup allows
 * the CSV, it is not being replaced and its requirements are met (where OLM checks them too).
 * For a CSV that was installed (`current` Succeeded or Failed), in OLM's order: resources of an
 * owned API service missing or outdated fail it (APIServiceResourceIssue) and then reinstall it
 * (APIServiceResourcesNeedReinstall); certificates due for rotation send it back to Pending
 * (NeedsCertRotation) to be reinstalled with new ones.
 */
export function servingDecision(
  decision: CSVDecision,
  state: ServingState,
  observation: ServingObservation | undefined,
  current: CSVPhase | undefined,
): CSVDecision {
  const to = (phase: CSVPhase, reason: CSVReason, message: string): CSVDecision => ({
    phase,
    reason,
    message,
    install: false,
    delete: false,
  });
  if (!state.plan.ok) {
    const first = state.plan.errors[0];
    return to(
      CSVPhase.Failed,
      first?.reason ?? CSVReason.InvalidWebhookDescription,
      state.plan.errors.map(formatProblem).join('; '),
    );
  }
  if (observation?.conflict !== undefined) {
    return to(CSVPhase.Failed, CSVReason.OwnerConflict, observation.conflict);
  }
  if (current !== CSVPhase.Succeeded && current !== CSVPhase.Failed) return decision;
  const check = observation?.check;
  if (check?.ok === false && check.apiService) {
    return current === CSVPhase.Succeeded
      ? to(CSVPhase.Failed, CSVReason.APIServiceResourceIssue, check.message)
      : to(CSVPhase.Pending, CSVReason.APIServiceResourcesNeedReinstall, check.message);
  }
  if ([...state.verdicts.values()].some((v) => !v.fresh)) {
    return to(CSVPhase.Pending, CSVReason.NeedsCertRotation, CertRotationMessage);
  }
  return decision;
}

export interface ServingInstall {
  /** What the Deployments mount, for rendering them again before they are applied. */
  mounts: Record<string, DeploymentCertificate>;
  objects: ServingObjects;
  /** `certsLastUpdated` / `certsRotateAt` when new certificates were issued. */
  status?: Pick<ClusterServiceVersionStatus, 'certsLastUpdated' | 'certsRotateAt'>;
}

/** Step 4a: fresh certificates stay; the others are replaced by new ones. */
export async function prepareServingInstall(
  ctx: CSVContext,
  csv: ClusterServiceVersion,
  operatorGroup: OperatorGroup,
  state: ServingState,
  apiServiceAnnotations: Record<string, string> | undefined,
): Promise<ServingInstall | undefined> {
  if (state.serving.length === 0) return undefined;
  const now = ctx.clock.now();
  const certificates = new Map<string, ServingCertificate>();
  let issued = false;
  let rotateAt = Number.POSITIVE_INFINITY;
  for (const s of state.serving) {
    const verdict = state.verdicts.get(s.deployment);
    if (verdict?.fresh) {
      certificates.set(s.deployment, verdict.certificate);
      rotateAt = Math.min(rotateAt, verdict.rotateAt);
      continue;
    }
    const cert = await issueServingCertificate({ hosts: s.hosts, now });
    ctx.log.info(
      { deployment: s.deployment, secret: s.secret, why: verdict?.fresh === false ? verdict.reason : 'none' },
      'issued serving certificate',
    );
    certificates.set(s.deployment, cert);
    rotateAt = Math.min(rotateAt, cert.rotateAt);
    issued = true;
  }
  const objects = renderServing({
    csv,
    operatorGroup,
    serving: state.serving,
    certificates,
    apiServiceAnnotations,
  });
  return {
    mounts: mounts(state, certificates),
    objects,
    ...(issued ? { status: { certsLastUpdated: formatTime(now), certsRotateAt: formatTime(rotateAt) } } : {}),
  };
}

/**
 * Step 4b, after the Deployments: the webhook configurations and APIServices, the CRD
 * conversions (a merge patch: the CRD itself is applied by the InstallPlan under the same field
 * manager, and applying only `spec.conversion` would drop the rest of it), and deleting the
 * webhook configurations the CSV owns but no longer declares.
 */
export async function applyServingAfterDeployments(
  ctx: CSVContext,
  csv: ClusterServiceVersion,
  objects: ServingObjects,
  writer: Writer,
) {
  for (const o of objects.afterDeployments) await writer.applier.apply(o);
  for (const c of objects.conversions) {
    await mergePatch(writer.client, objectPath(ServingResources.CustomResourceDefinition, c.crd), {
      spec: { conversion: c.conversion },
    });
  }
  const live = await ownedWebhookConfigurations(ctx, {
    name: csv.metadata.name ?? '',
    namespace: csv.metadata.namespace ?? '',
  });
  for (const stale of staleWebhookConfigurations(objects.afterDeployments, live)) {
    const kind = webhookConfigurationKinds.find((k) => k.kind === stale.kind);
    if (kind !== undefined && (await deleteIfPresent(ctx.client, objectPath(kind, stale.name)))) {
      ctx.log.info(
        { kind: stale.kind, name: stale.name },
        'removed webhook configuration no longer declared',
      );
    }
  }
}

const webhookConfigurationKinds = [
  ServingResources.ValidatingWebhookConfiguration,
  ServingResources.MutatingWebhookConfiguration,
];

/** The webhook configurations of both kinds that carry a CSV's owner labels. */
async function ownedWebhookConfigurations(
  ctx: CSVContext,
  csv: { name: string; namespace: string },
): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (const kind of webhookConfigurationKinds) {
    const list = await ctx.client.request<{ items?: KubeObject[] }>({
      path: collectionPath(kind),
      query: { labelSelector: ownerSelector(csv) },
    });
    // Items of a list carry no kind of their own.
    for (const item of list.items ?? []) out.push({ ...item, kind: kind.kind });
  }
  return out;
}

/**
 * OLM holds a CSV in Installing until its APIServices are Available; Bosun does not (see
 * src/install/apiservices.ts) and says so with a Warning event when the CSV reaches Succeeded.
 */
export async function reportUnavailableAPIServices(
  ctx: CSVContext,
  csv: ClusterServiceVersion,
  decision: CSVDecision,
  observation: ServingObservation | undefined,
) {
  const check = observation?.check;
  if (check?.ok !== true || check.unavailableAPIServices.length === 0) return;
  if (decision.phase !== CSVPhase.Succeeded || csv.status?.phase === CSVPhase.Succeeded) return;
  await ctx.events.warning(
    csv,
    'APIServiceUnavailable',
    `${check.unavailableAPIServices.map((u) => u.message).join('; ')}; the install succeeded without waiting for it`,
  );
}

/**
 * `certsLastUpdated` / `certsRotateAt` as the stored certificates say, when all are fresh. The
 * status is derived from the Secrets on every reconcile rather than remembered from the reconcile
 * that issued them: a status written from a stale cache would otherwise drop the fields for good.
 */
export function servingCertificateStatus(
  state: ServingState,
): Pick<ClusterServiceVersionStatus, 'certsLastUpdated' | 'certsRotateAt'> | undefined {
  const fresh = [...state.verdicts.values()].flatMap((v) => (v.fresh ? [v] : []));
  if (fresh.length === 0 || fresh.length < state.verdicts.size) return undefined;
  return {
    certsLastUpdated: formatTime(Math.max(...fresh.map((v) => v.issuedAt))),
    certsRotateAt: formatTime(Math.min(...fresh.map((v) => v.rotateAt))),
  };
}

/**
 * When to look at a CSV with certificates again: before the first one is due for rotation, and
 * at the latest after `ServingRecheckMs`.
 */
export function servingRequeueAfter(state: ServingState, now: number): number | undefined {
  const due = [...state.verdicts.values()].flatMap((v) => (v.fresh ? [v.rotateAt - now] : []));
  if (due.length === 0) return undefined;
  return Math.min(Math.max(1_000, Math.min(...due)), ServingRecheckMs);
}

/**
 * After a CSV is gone: CRDs whose conversion webhook called a Service in its namespace, and that
 * no CSV left there declares, go back to strategy None (the webhook's Service is gone with the
 * operator, and the API server could no longer read their custom resources in other versions).
 */
export async function resetOrphanedConversions(ctx: CSVContext, namespace: string): Promise<string[]> {
  const names = orphanedConversions(ctx.informers.crds.list(), namespace, ctx.informers.csvs.list(namespace));
  const reset: string[] = [];
  for (const name of names) {
    try {
      await mergePatch(ctx.client, objectPath(ServingResources.CustomResourceDefinition, name), {
        spec: { conversion: { strategy: 'None', webhook: null } },
      });
      reset.push(name);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
  return reset;
}
