/**
 * The Operator controller (key: the Operator's name, cluster-scoped), OLM's operator and adoption
 * controllers in one: for the operator named `<package>.<namespace>` it puts the component label
 * `operators.coreos.com/<name>` on what the operator is made of (src/install/operator-components.ts
 * says what), keeps the Operator's `status.components` listing every object with that label, and
 * creates the Operator when components exist without it. So an Operator deleted while anything
 * of it is left comes back; once nothing is left it stays gone, and an Operator whose components
 * all went stays, with no refs (OLM deletes none either).
 *
 * Components are read from informer caches, so the status follows every change to them; the
 * kinds without a cache of their own elsewhere are cached for this controller, only the objects
 * Bosun manages and only their metadata.
 */
import type { KubeObject, ResourceType } from '../apis/meta.js';
import {
  type ClusterServiceVersion,
  type Operator,
  Resources,
  type Subscription,
} from '../apis/operators.js';
import {
  adoptionChanges,
  componentLabelKey,
  hasLabel,
  type LabelChange,
  operatorNameOf,
  operatorNamesOf,
  operatorStatus,
  ownerCSVsOf,
} from '../install/operator-components.js';
import { objectKey } from '../kube/cache.js';
import { objectPath } from '../kube/client.js';
import { isNotFound } from '../kube/errors.js';
import type { Informer } from '../kube/informer.js';
import { Builtin } from '../kube/resources.js';
import { writeStatus } from '../kube/status.js';
import { type Controller, InstallPlanSubscriptionLabel, type ScopedContext } from './context.js';
import { reportingForbidden } from './forbidden.js';
import { withoutBookkeeping } from './cache-transforms.js';
import { ServingResources } from './csv-serving.js';
import { mergePatch } from './objects.js';

/** Label keys under the component prefix that are not component labels. */
const notComponents: ReadonlySet<string> = new Set([InstallPlanSubscriptionLabel]);

/** The informer of each kind an operator may be made of (OLM's list), and where the kind is served. */
const componentKinds = {
  subscriptions: Resources.Subscription,
  installPlans: Resources.InstallPlan,
  csvs: Resources.ClusterServiceVersion,
  operatorConditions: Resources.OperatorCondition,
  deployments: Builtin.Deployment,
  crds: Builtin.CustomResourceDefinition,
  namespaces: Builtin.Namespace,
  clusterRoles: Builtin.ClusterRole,
  clusterRoleBindings: Builtin.ClusterRoleBinding,
  roles: Builtin.Role,
  roleBindings: Builtin.RoleBinding,
  serviceAccounts: Builtin.ServiceAccount,
  configMaps: Builtin.ConfigMap,
  secrets: ServingResources.Secret,
  services: ServingResources.Service,
  apiServices: ServingResources.APIService,
} as const satisfies Record<string, ResourceType>;
type ComponentInformer = keyof typeof componentKinds;
const componentInformers = Object.keys(componentKinds) as ComponentInformer[];

/** The kinds a CSV owns objects of (everything but Subscriptions, InstallPlans, CSVs and CRDs). */
const ownedInformers = componentInformers.filter(
  (i) => !['subscriptions', 'installPlans', 'csvs', 'crds'].includes(i),
);

const uses = {
  informers: ['operators', ...componentInformers] as const,
  ports: ['applier', 'client'] as const,
};

export type OperatorContext = ScopedContext<(typeof uses.informers)[number], (typeof uses.ports)[number]>;

const operatorApiVersion = `${Resources.Operator.group}/${Resources.Operator.version}`;

/**
 * What the caches of `componentKinds` without a cache of their own elsewhere keep of an object:
 * its identity and metadata, and its status conditions (an APIService's say whether it is
 * available). A Secret's data, a ConfigMap's content and a role's rules are never held.
 */
export function metadataOnly<T extends KubeObject>(obj: T): T {
  const { apiVersion, kind, metadata } = withoutBookkeeping(obj);
  const conditions = (obj as { status?: { conditions?: unknown } }).status?.conditions;
  return {
    apiVersion,
    kind,
    metadata,
    ...(Array.isArray(conditions) ? { status: { conditions } } : {}),
  } as T;
}

const operatorControllerOwn: Controller<(typeof uses.informers)[number], (typeof uses.ports)[number]> = {
  ...uses,
  name: 'operator',
  kind: Resources.Operator.kind,
  watch(ctx, enqueue) {
    const { informers } = ctx;
    const byLabels = (o: KubeObject | undefined) => {
      for (const n of operatorNamesOf(o?.metadata?.labels, notComponents)) enqueue(n);
    };
    const onObject = (o: KubeObject) => {
      byLabels(o);
      for (const n of relatedOperators(ctx, o)) enqueue(n);
    };
    informers.operators.on({
      add: (o) => enqueue(o.metadata.name ?? ''),
      update: (_, o) => enqueue(o.metadata.name ?? ''),
      delete: (o) => enqueue(o.metadata.name ?? ''),
    });
    for (const i of componentInformers) {
      (informers[i] as Informer<KubeObject>).on({
        add: onObject,
        // An object that lost a component label leaves an operator: that one must look again too.
        update: (old, o) => {
          byLabels(old);
          onObject(o);
        },
        delete: onObject,
      });
    }
  },
  reconcile: (ctx) => async (name) => {
    const key = componentLabelKey(name);
    if (!key.ok) {
      ctx.log.info({ errors: key.errors }, 'operator name cannot be a label: not reconciled');
      return;
    }
    const changes = adoptionChanges({
      key: key.value,
      subscriptions: ctx.informers.subscriptions.list(),
      csvs: ctx.informers.csvs.list(),
      installPlans: ctx.informers.installPlans.list(),
      crds: ctx.informers.crds.list(),
      owned: ownedInformers.flatMap((i) => (ctx.informers[i] as Informer<KubeObject>).list()),
    });
    for (const change of changes) await relabel(ctx, change);
    const components = currentComponents(ctx, key.value, changes);

    let operator = ctx.informers.operators.get(name);
    if (operator === undefined) {
      if (components.length === 0 || notComponents.has(key.value)) return;
      operator = await ctx.applier.apply<Operator>({
        apiVersion: operatorApiVersion,
        kind: 'Operator',
        metadata: { name },
        spec: {},
      } as Operator);
      ctx.log.info({ components: components.length }, 'operator created');
    }
    if (operator.metadata.deletionTimestamp) return;
    try {
      await writeStatus(ctx.applier, {
        resource: Resources.Operator,
        object: operator,
        next: operatorStatus(key.value, components),
      });
    } catch (err) {
      // Deleted since the cache saw it: its delete event brings this key back.
      if (!isNotFound(err)) throw err;
    }
  },
};

/**
 * Operators an object matters to besides those its labels name: a Subscription's own; the
 * operators of the Subscriptions whose CSV or InstallPlan it is (to be adopted); the operators of
 * the CSVs that own it (for its label), or of those owning a CRD.
 */
function relatedOperators(ctx: OperatorContext, o: KubeObject): string[] {
  const { informers } = ctx;
  const ns = o.metadata?.namespace;
  const name = o.metadata?.name;
  const csvOperators = (csv: ClusterServiceVersion | undefined) =>
    operatorNamesOf(csv?.metadata.labels, notComponents);
  const subOperators = (match: (s: Subscription) => boolean) =>
    informers.subscriptions
      .list(ns)
      .filter(match)
      .map(operatorNameOf)
      .filter((n): n is string => n !== undefined);
  switch (`${o.apiVersion}/${o.kind}`) {
    case `${Resources.Subscription.group}/${Resources.Subscription.version}/Subscription`: {
      const own = operatorNameOf(o as Subscription);
      return own ? [own] : [];
    }
    case `${Resources.ClusterServiceVersion.group}/${Resources.ClusterServiceVersion.version}/ClusterServiceVersion`:
      return subOperators((s) => s.status?.installedCSV === name || s.status?.currentCSV === name);
    case `${Resources.InstallPlan.group}/${Resources.InstallPlan.version}/InstallPlan`:
      return subOperators((s) => s.status?.installPlanRef?.name === name);
    case 'apiextensions.k8s.io/v1/CustomResourceDefinition':
      return informers.csvs
        .list()
        .filter((c) => (c.spec.customresourcedefinitions?.owned ?? []).some((d) => d.name === name))
        .flatMap(csvOperators);
    default:
      return ownerCSVsOf(o).flatMap((r) => csvOperators(informers.csvs.get(objectKey(r.namespace, r.name))));
  }
}

const resourceByKind = new Map<string, ResourceType>(
  Object.values(componentKinds).map((r) => [`${r.group}/${r.kind}`, r]),
);

/** Puts a component label on an object or takes it off (a merge patch of that one label). */
async function relabel(ctx: OperatorContext, change: LabelChange) {
  const { object, key, add } = change;
  const group = object.apiVersion?.includes('/') ? object.apiVersion.split('/')[0] : '';
  const resource = resourceByKind.get(`${group}/${object.kind}`);
  if (resource === undefined) throw new Error(`no resource known for ${object.apiVersion} ${object.kind}`);
  const path = objectPath(resource, object.metadata?.name ?? '', object.metadata?.namespace);
  try {
    await mergePatch(ctx.client, path, { metadata: { labels: { [key]: add ? '' : null } } });
  } catch (err) {
    // Gone meanwhile: nothing to label.
    if (isNotFound(err)) return;
    throw err;
  }
  ctx.log.info(
    { object: `${object.kind}/${objectKey(object)}`, label: key },
    add ? 'component adopted' : 'component disowned',
  );
}

/**
 * The objects carrying the component label `key`, as the caches have them, with the label
 * changes just made counted (the caches see them a moment later).
 */
function currentComponents(ctx: OperatorContext, key: string, changes: readonly LabelChange[]): KubeObject[] {
  const id = (o: KubeObject) => `${o.apiVersion}/${o.kind}/${objectKey(o)}`;
  const changed = new Map(changes.map((c) => [id(c.object), c]));
  const out = componentInformers
    .flatMap((i) => (ctx.informers[i] as Informer<KubeObject>).list())
    .filter((o) => hasLabel(o, key) && changed.get(id(o))?.add !== false);
  const seen = new Set(out.map(id));
  for (const c of changes) if (c.add && !seen.has(id(c.object))) out.push(c.object);
  return out;
}

/** A reconcile refused with 403 is reported on the object it reconciles (./forbidden.ts). */
export const operatorController = reportingForbidden(operatorControllerOwn, (ctx, name) =>
  [ctx.informers.operators.get(name)].filter((o) => o !== undefined),
);
