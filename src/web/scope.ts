/**
 * What one viewer of the manager's web catalog may see. The page shows two kinds of thing: catalog
 * content (packages, their descriptions, channels and icons) and the cluster's state (where each
 * package is installed, with which version and phase; namespaces; OperatorGroups; the catalogs of
 * single namespaces). Decided here:
 * - Anyone who reaches the port sees the catalog content of the global catalog namespace's
 *   catalogs (what every namespace may subscribe to, and what `bosun catalog serve` shows without
 *   a cluster), and nothing of the cluster's state.
 * - A viewer whose bearer token the API server authenticates sees, in addition, what Kubernetes
 *   lets that user list: a namespace's catalogs where it may list `packagemanifests` there (as
 *   the PackageManifest API decides), a namespace's installs where it may list `subscriptions`,
 *   `clusterserviceversions` and `installplans` there, its OperatorGroups where it may list
 *   `operatorgroups`, and the namespaces of the cluster where it may list `namespaces` (else those
 *   it sees something of). Each is asked once for all namespaces first, so a cluster admin costs
 *   six SubjectAccessReviews and a namespace's user a few per namespace with something in it.
 * Pure: the reviews are a function it is given.
 */
import { createHash } from 'node:crypto';
import type { InstallContext, OperatorGroupInfo } from './client/api.js';
import type { CatalogContent, ClusterObjects } from './view.js';

/** OLM's namespace for operators that watch every namespace (`bosun start` makes it). */
export const GlobalOperatorsNamespace = 'operators';

/** The catalogs and cluster state the page shows, at one moment. */
export interface WebState {
  /** Changes whenever anything else here does (an ETag is made of it). */
  revision: string;
  catalogs: readonly CatalogContent[];
  /** Subscriptions, CSVs, InstallPlans, OperatorGroups and namespaces; absent without a cluster. */
  cluster?: ClusterState;
  /** What the install instructions of a package of this catalog need. */
  installContext(catalog: CatalogContent): InstallContext;
}

export interface ClusterState extends ClusterObjects {
  operatorGroups: readonly OperatorGroupInfo[];
  namespaces: readonly string[];
  /** Catalogs here are visible from every namespace. */
  globalNamespace: string;
}

export interface Scope {
  /** Equal for viewers who may see the same (part of ETags and of the index cache's key). */
  key: string;
  /** The user, for the page to say who is signed in; absent for an anonymous viewer. */
  user?: string;
  /** Sees anything of the cluster's state (else the install instructions know none of it). */
  cluster: boolean;
  catalogs(namespace: string): boolean;
  installs(namespace: string): boolean;
  operatorGroups(namespace: string): boolean;
  namespace(name: string): boolean;
}

/** Everything: a catalog directory's page (`bosun catalog serve`), which has no cluster state. */
export const FullScope: Scope = {
  key: 'all',
  cluster: true,
  catalogs: () => true,
  installs: () => true,
  operatorGroups: () => true,
  namespace: () => true,
};

/** The catalog content of the global catalog namespace's catalogs, nothing of the cluster. */
export function anonymousScope(globalNamespace: string): Scope {
  return {
    key: 'anonymous',
    cluster: false,
    catalogs: (ns) => ns === globalNamespace,
    installs: () => false,
    operatorGroups: () => false,
    namespace: () => false,
  };
}

/** A resource whose `list` permission decides what a viewer sees. */
export interface ListedResource {
  group: string;
  resource: string;
  /** Cluster-scoped: asked for once, without a namespace. */
  clusterScoped?: boolean;
}

export const ScopeResources = {
  packageManifests: { group: 'packages.operators.coreos.com', resource: 'packagemanifests' },
  subscriptions: { group: 'operators.coreos.com', resource: 'subscriptions' },
  csvs: { group: 'operators.coreos.com', resource: 'clusterserviceversions' },
  installPlans: { group: 'operators.coreos.com', resource: 'installplans' },
  operatorGroups: { group: 'operators.coreos.com', resource: 'operatorgroups' },
  namespaces: { group: '', resource: 'namespaces', clusterScoped: true },
} as const satisfies Record<string, ListedResource>;

/** Whether the user may list `resource` in `namespace` (`''`: in every namespace, or cluster-scoped). */
export type MayList = (resource: ListedResource, namespace: string) => Promise<boolean>;

/** The namespaces whose visibility matters for `state`: those holding something the page shows. */
export function scopeNeeds(state: WebState): {
  catalogNamespaces: string[];
  installNamespaces: string[];
  groupNamespaces: string[];
} {
  const global = state.cluster?.globalNamespace;
  const uniq = (xs: Iterable<string>) => [...new Set(xs)].filter(Boolean).sort();
  return {
    catalogNamespaces: uniq(state.catalogs.map((c) => c.info.namespace ?? '').filter((n) => n !== global)),
    installNamespaces: uniq((state.cluster?.subscriptions ?? []).map((s) => s.metadata.namespace ?? '')),
    groupNamespaces: uniq((state.cluster?.operatorGroups ?? []).map((g) => g.namespace)),
  };
}

/** The scope of a user the API server authenticated, from what `may` answers. */
export async function userScope(
  user: string,
  state: WebState,
  may: MayList,
  concurrency = 8,
): Promise<Scope> {
  const global = state.cluster?.globalNamespace ?? '';
  const needs = scopeNeeds(state);
  /** The namespaces of `names` where `resource` may be listed: all when it may be everywhere. */
  const allowed = async (resource: ListedResource, names: string[]): Promise<Set<string> | 'all'> => {
    if (await may(resource, '')) return 'all';
    const out = new Set<string>();
    await eachLimited(names, concurrency, async (ns) => {
      if (await may(resource, ns)) out.add(ns);
    });
    return out;
  };
  const [catalogs, subs, csvs, plans, groups, namespaces] = await Promise.all([
    allowed(ScopeResources.packageManifests, needs.catalogNamespaces),
    allowed(ScopeResources.subscriptions, needs.installNamespaces),
    allowed(ScopeResources.csvs, needs.installNamespaces),
    allowed(ScopeResources.installPlans, needs.installNamespaces),
    allowed(ScopeResources.operatorGroups, needs.groupNamespaces),
    may(ScopeResources.namespaces, ''),
  ]);
  const has = (set: Set<string> | 'all', ns: string) => set === 'all' || set.has(ns);
  const installs = (ns: string) => has(subs, ns) && has(csvs, ns) && has(plans, ns);
  const seen = new Set<string>([
    ...needs.catalogNamespaces.filter((ns) => has(catalogs, ns)),
    ...needs.installNamespaces.filter(installs),
    ...needs.groupNamespaces.filter((ns) => has(groups, ns)),
  ]);
  const shown = (set: Set<string> | 'all') => (set === 'all' ? 'all' : [...set].sort());
  const key = createHash('sha256')
    .update(
      JSON.stringify([
        user,
        shown(catalogs),
        shown(subs),
        shown(csvs),
        shown(plans),
        shown(groups),
        namespaces,
        [...seen].sort(),
      ]),
    )
    .digest('base64url')
    .slice(0, 22);
  return {
    key,
    user,
    cluster: true,
    catalogs: (ns) => ns === global || has(catalogs, ns),
    installs,
    operatorGroups: (ns) => has(groups, ns),
    namespace: (name) => namespaces || seen.has(name),
  };
}

async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The state as the scope's viewer may see it. */
export function scopedState(state: WebState, scope: Scope): WebState {
  if (scope === FullScope) return state;
  const cluster = state.cluster;
  const inNs = <T extends { metadata: { namespace?: string } }>(xs: readonly T[]) =>
    xs.filter((x) => scope.installs(x.metadata.namespace ?? ''));
  return {
    revision: `${state.revision}.${scope.key}`,
    catalogs: state.catalogs.filter((c) => scope.catalogs(c.info.namespace ?? '')),
    ...(cluster && scope.cluster
      ? {
          cluster: {
            subscriptions: inNs(cluster.subscriptions),
            csvs: inNs(cluster.csvs),
            installPlans: inNs(cluster.installPlans),
            operatorGroups: cluster.operatorGroups.filter((g) => scope.operatorGroups(g.namespace)),
            namespaces: cluster.namespaces.filter((n) => scope.namespace(n)),
            globalNamespace: cluster.globalNamespace,
          },
        }
      : {}),
    installContext: (c) => scopedContext(state.installContext(c), scope),
  };
}

/**
 * The install instructions' context as the scope's viewer may see it. Without any cluster state
 * the page writes instructions as for a catalog directory: OLM's conventional `operators`
 * namespace for operators of every namespace, and a Namespace and OperatorGroup where needed.
 */
export function scopedContext(context: InstallContext, scope: Scope): InstallContext {
  const { cluster, globalOperatorsNamespace, ...rest } = context;
  if (!scope.cluster || !cluster) return { ...rest, globalOperatorsNamespace: GlobalOperatorsNamespace };
  const global =
    globalOperatorsNamespace && scope.operatorGroups(globalOperatorsNamespace)
      ? globalOperatorsNamespace
      : GlobalOperatorsNamespace;
  return {
    ...rest,
    globalOperatorsNamespace: global,
    cluster: {
      operatorGroups: cluster.operatorGroups.filter((g) => scope.operatorGroups(g.namespace)),
      namespaces: cluster.namespaces.filter((n) => scope.namespace(n)),
    },
  };
}
