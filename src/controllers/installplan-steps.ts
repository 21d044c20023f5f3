/**
 * An InstallPlan's steps from what the manager holds: the bundle of each CSV it names, found in
 * the catalog store, planned by src/install for the namespace's OperatorGroup. Reads only the
 * catalog store and informer caches, so it runs on every reconcile and gives the same steps each
 * time for the same inputs.
 *
 * Where the bundle comes from: the CatalogSource in `spec.source`/`spec.sourceNamespace` when the
 * plan names one (the Subscription controller records it there); otherwise the catalogs visible
 * from the namespace, highest `spec.priority` first.
 *
 * Without exactly one OperatorGroup the plan is still carried out, scoped to the operator's own
 * namespace, as OLM does: the CSV then reports NoOperatorGroup or TooManyOperatorGroups, and the
 * CSV controller re-scopes the RBAC once the namespace has one group.
 */
import type { BundleDoc } from '../apis/fbc.js';
import type { InstallPlan } from '../apis/operators.js';
import { decodeBundle } from '../install/bundle-objects.js';
import {
  type NamespaceInfo,
  type OperatorGroupTargets,
  operatorGroupNamespaces,
  pickOperatorGroup,
} from '../install/operatorgroup.js';
import { type InstallStep, planInstall } from '../install/plan.js';
import type { OperatorGroup } from '../apis/operators.js';
import type { CatalogRef, CatalogStore, ControllerContext } from './context.js';
import { formatProblem } from '../util/result.js';

export type PlannedSteps =
  | { kind: 'steps'; steps: InstallStep[]; catalogSources: string[] }
  | { kind: 'wait'; message: string }
  | { kind: 'failed'; message: string };

export type LocatedBundle =
  | { kind: 'found'; bundle: BundleDoc; source: CatalogRef }
  | { kind: 'wait'; message: string }
  | { kind: 'failed'; message: string };

export function locateBundle(
  catalogs: Pick<CatalogStore, 'get' | 'findBundle' | 'visibleFrom'>,
  ip: Pick<InstallPlan, 'spec' | 'metadata'>,
  csvName: string,
): LocatedBundle {
  const { source, sourceNamespace } = ip.spec;
  if (source && sourceNamespace) {
    const ref = { name: source, namespace: sourceNamespace };
    if (catalogs.get(ref) === undefined) {
      return { kind: 'wait', message: `waiting for catalog ${sourceNamespace}/${source} to be loaded` };
    }
    const bundle = catalogs.findBundle(ref, csvName);
    if (bundle === undefined) {
      return { kind: 'failed', message: `bundle ${csvName} is not in catalog ${sourceNamespace}/${source}` };
    }
    return { kind: 'found', bundle, source: ref };
  }
  const visible = [...catalogs.visibleFrom(ip.metadata.namespace ?? '')].sort(
    (a, b) => b.priority - a.priority,
  );
  for (const snapshot of visible) {
    const bundle = catalogs.findBundle(snapshot.ref, csvName);
    if (bundle !== undefined) return { kind: 'found', bundle, source: snapshot.ref };
  }
  // A catalog may still be loading; the plan is looked at again when catalogs change.
  return {
    kind: 'wait',
    message: `waiting for a catalog visible from namespace ${ip.metadata.namespace} to offer bundle ${csvName}`,
  };
}

/** The scope a plan's RBAC gets: the one OperatorGroup's targets, or the own namespace. */
export function installTargets(
  groups: readonly OperatorGroup[],
  namespaces: readonly NamespaceInfo[],
  namespace: string,
): OperatorGroupTargets {
  const picked = pickOperatorGroup(groups);
  if (picked.ok) {
    const targets = operatorGroupNamespaces(picked.group, namespaces);
    if (targets.ok) return { operatorGroup: picked.group.metadata.name ?? '', namespaces: targets.value };
  }
  return { operatorGroup: '', namespaces: [namespace] };
}

export function planSteps(ctx: ControllerContext, ip: InstallPlan): PlannedSteps {
  const namespace = ip.metadata.namespace ?? '';
  const targets = installTargets(
    ctx.informers.operatorGroups.list(namespace),
    ctx.informers.namespaces
      .list()
      .map((n) => ({ name: n.metadata?.name ?? '', labels: n.metadata?.labels })),
    namespace,
  );
  const steps: InstallStep[] = [];
  const sources = new Set<string>();
  for (const csvName of ip.spec.clusterServiceVersionNames) {
    const located = locateBundle(ctx.catalogs, ip, csvName);
    if (located.kind !== 'found') return located;
    const decoded = decodeBundle(located.bundle);
    if (!decoded.ok) return { kind: 'failed', message: decoded.errors.map(formatProblem).join('; ') };
    // `spec.replaces` is kept only when the CSV it names is installed here (an upgrade).
    const replaces = decoded.value.csv.spec.replaces;
    const installed = replaces ? ctx.informers.csvs.get(`${namespace}/${replaces}`) : undefined;
    const planned = planInstall({
      bundle: decoded.value,
      namespace,
      targets,
      source: located.source,
      ...(installed ? { replaces } : {}),
    });
    if (!planned.ok) return { kind: 'failed', message: planned.errors.map(formatProblem).join('; ') };
    steps.push(...planned.value);
    sources.add(located.source.name);
  }
  return { kind: 'steps', steps, catalogSources: [...sources].sort() };
}
