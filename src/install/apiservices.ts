/**
 * A CSV's owned `spec.apiservicedefinitions` as OLM installs them
 * (pkg/controller/install/apiservice.go): one APIService `<version>.<group>` per description,
 * with groupPriorityMinimum 2000 and versionPriority 15, pointing at `<deployment>-service` in
 * the CSV's namespace on `containerPort` (default 443) with the serving CA as `caBundle`, labelled
 * with the CSV's owner labels (an APIService is cluster-scoped, so uninstall finds it by them) and
 * annotated with the Subscription's `spec.config.annotations`.
 *
 * An APIService another CSV owns is taken over only from the CSV this one replaces, or from one
 * that is itself being replaced or deleted (OLM's `IsAPIServiceAdoptable`); otherwise the CSV
 * fails with OwnerConflict.
 *
 * OLM holds a CSV in Installing until each owned APIService is Available (the aggregator reached
 * the operator's API server). Bosun waits until each exists as rendered, and reports one that is
 * not Available instead of waiting for it: on a cluster whose pods do not run (the local control
 * plane's simulated node) an APIService never becomes Available, and such operators must still
 * install there.
 */
import type { KubeObject } from '../apis/meta.js';
import type { APIServiceDescription, ClusterServiceVersion } from '../apis/operators.js';
import { CSVPhase } from '../apis/operators.js';
import { stableStringify } from './hash.js';
import type { Resource } from '../olm/kinds.js';
import { type CSVRef, csvOwnerOf, ownerLabels } from './ownership.js';
import type { Served } from './webhooks.js';

const apiRegistration = 'apiregistration.k8s.io/v1';

export function apiServiceName(desc: Pick<APIServiceDescription, 'group' | 'version'>): string {
  return `${desc.version}.${desc.group}`;
}

export function apiServiceObjects(input: {
  csv: CSVRef;
  apiServices: readonly APIServiceDescription[];
  served: Served;
  annotations?: Record<string, string>;
}): Resource[] {
  const { csv, served } = input;
  const annotations =
    input.annotations && Object.keys(input.annotations).length > 0 ? input.annotations : undefined;
  return input.apiServices.map((desc) => ({
    apiVersion: apiRegistration,
    kind: 'APIService',
    metadata: {
      name: apiServiceName(desc),
      labels: ownerLabels(csv),
      ...(annotations ? { annotations: { ...annotations } } : {}),
    },
    spec: {
      group: desc.group,
      version: desc.version,
      groupPriorityMinimum: 2000,
      versionPriority: 15,
      service: {
        namespace: csv.namespace,
        name: served.service,
        port: desc.containerPort !== undefined && desc.containerPort > 0 ? desc.containerPort : 443,
      },
      caBundle: Buffer.from(served.caPEM, 'utf8').toString('base64'),
    },
  }));
}

/**
 * Why the CSV may not take over an existing APIService, or undefined when it may: one without
 * owner labels, or owned by a CSV that this one does not replace and that is not being replaced
 * or deleted itself. `phaseOf` gives the phase of a CSV that exists.
 */
export function apiServiceOwnerConflict(
  existing: KubeObject | undefined,
  csv: Pick<ClusterServiceVersion, 'metadata' | 'spec'>,
  phaseOf: (namespace: string, name: string) => CSVPhase | undefined,
): string | undefined {
  if (existing === undefined) return undefined;
  const name = existing.metadata?.name ?? '';
  const notAdoptable = `pre-existing APIService ${name} is not adoptable`;
  const ownerRef = csvOwnerOf(existing.metadata?.labels);
  if (!ownerRef?.namespace) return `${notAdoptable}: it is not owned by a ClusterServiceVersion`;
  const { name: owner, namespace: ownerNamespace } = ownerRef;
  const namespace = csv.metadata.namespace ?? '';
  if (ownerNamespace === namespace && (owner === csv.metadata.name || owner === csv.spec.replaces)) {
    return undefined;
  }
  const phase = phaseOf(ownerNamespace, owner);
  if (phase === CSVPhase.Replacing || phase === CSVPhase.Deleting) return undefined;
  return `${notAdoptable}: it belongs to ClusterServiceVersion ${ownerNamespace}/${owner}`;
}

interface APIServiceStatus {
  conditions?: { type?: string; status?: string; reason?: string; message?: string }[];
}

/**
 * The first APIService that is not as rendered (missing, or pointing at another Service or CA),
 * or the ones that are but are not Available, with the aggregator's reason.
 */
export function checkAPIServices(
  desired: readonly Resource[],
  live: ReadonlyMap<string, KubeObject | undefined>,
):
  | { ok: true; unavailable: { name: string; message: string }[] }
  | { ok: false; state: 'missing' | 'outdated'; name: string; message: string } {
  const unavailable: { name: string; message: string }[] = [];
  for (const want of desired) {
    if (want.kind !== 'APIService') continue;
    const name = want.metadata.name;
    const have = live.get(name) as
      (KubeObject & { spec?: Record<string, unknown>; status?: APIServiceStatus }) | undefined;
    if (have === undefined)
      return { ok: false, state: 'missing', name, message: `APIService ${name} not found` };
    const spec = want.spec as Record<string, unknown>;
    if (stableStringify(have.spec?.service) !== stableStringify(spec.service)) {
      return { ok: false, state: 'outdated', name, message: `APIService ${name} points at another service` };
    }
    if (have.spec?.caBundle !== spec.caBundle) {
      return { ok: false, state: 'outdated', name, message: `APIService ${name} has another CA bundle` };
    }
    const available = have.status?.conditions?.find((c) => c.type === 'Available');
    if (available?.status !== 'True') {
      const why = available
        ? `${available.reason ?? 'NotAvailable'}: ${available.message ?? ''}`.trim()
        : 'no Available condition yet';
      unavailable.push({ name, message: `APIService ${name} is not Available (${why})` });
    }
  }
  return { ok: true, unavailable };
}
