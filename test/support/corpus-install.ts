/**
 * Subscribing real operators as a new user would, and telling what became of each: shared by the
 * corpus-install benchmark (every package of the OperatorHub corpus) and the integration test that
 * installs a fixed sample of them.
 *
 * Each package is installed from its default channel into a namespace of its own, with an
 * OperatorGroup chosen from the install modes of the channel head's CSV. The most isolated mode
 * the CSV supports wins: OwnNamespace, then SingleNamespace (targeting a second namespace), then
 * AllNamespaces, then MultiNamespace. Isolation keeps two packages that provide the same API
 * (one as another's dependency) from meeting in one OperatorGroup's namespaces.
 */
import type { DeclarativeConfig, Property } from '../../src/apis/fbc.js';
import type { KubeObject } from '../../src/apis/meta.js';
import {
  type CatalogSource,
  type ClusterServiceVersion,
  type InstallPlan,
  Resources,
  type Subscription,
} from '../../src/apis/operators.js';
import { channelHeads } from '../../src/olm/channel-graph.js';
import type { KubeClient } from '../../src/kube/client.js';
import { collectionPath } from '../../src/kube/client.js';
import { createInformer, type Informer } from '../../src/kube/informer.js';
import { isAlreadyExists } from '../../src/kube/errors.js';

type InstallModeType = 'OwnNamespace' | 'SingleNamespace' | 'MultiNamespace' | 'AllNamespaces';

export interface PackagePlan {
  package: string;
  channel: string;
  /** The channel head the Subscription should reach. */
  head: string;
  namespace: string;
  /** The OperatorGroup's targetNamespaces; undefined targets all namespaces. */
  targetNamespaces?: string[];
  /** Namespaces to create besides `namespace` (targets of SingleNamespace/MultiNamespace). */
  extraNamespaces: string[];
  mode: InstallModeType | 'none';
}

/** A DNS-1123 label for `prefix-name`: lower case, at most 63 characters, unique by a hash suffix when cut. */
export function namespaceFor(prefix: string, name: string): string {
  const clean = `${prefix}-${name}`.toLowerCase().replace(/[^a-z0-9-]/g, '-');
  if (clean.length <= 63) return clean.replace(/-+$/, '');
  let h = 0;
  for (const c of clean) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return `${clean.slice(0, 54).replace(/-+$/, '')}-${h.toString(36).slice(0, 8)}`;
}

const preference: InstallModeType[] = ['OwnNamespace', 'SingleNamespace', 'AllNamespaces', 'MultiNamespace'];

/** Which OperatorGroup each package of `config` gets, and what its Subscription names. */
export function planPackages(config: DeclarativeConfig, prefix = 'op'): PackagePlan[] {
  const bundles = new Map(config.bundles.map((b) => [`${b.package}/${b.name}`, b]));
  const plans: PackagePlan[] = [];
  for (const pkg of config.packages) {
    const channel = pkg.defaultChannel ?? '';
    const entries = config.channels.find((c) => c.package === pkg.name && c.name === channel)?.entries ?? [];
    const head = channelHeads(entries)[0] ?? '';
    const supported = installModesOf(bundles.get(`${pkg.name}/${head}`)?.properties ?? []);
    const mode = preference.find((m) => supported.has(m)) ?? 'none';
    const namespace = namespaceFor(prefix, pkg.name);
    const target = namespaceFor(`${prefix}t`, pkg.name);
    const plan: PackagePlan = { package: pkg.name, channel, head, namespace, extraNamespaces: [], mode };
    if (mode === 'OwnNamespace' || mode === 'none') plan.targetNamespaces = [namespace];
    if (mode === 'SingleNamespace') {
      plan.targetNamespaces = [target];
      plan.extraNamespaces = [target];
    }
    if (mode === 'MultiNamespace') {
      plan.targetNamespaces = [namespace, target];
      plan.extraNamespaces = [target];
    }
    plans.push(plan);
  }
  return plans;
}

function installModesOf(properties: readonly Property[]): Set<string> {
  const meta = properties.find((p) => p.type === 'olm.csv.metadata')?.value as
    { installModes?: { type: string; supported: boolean }[] } | undefined;
  return new Set((meta?.installModes ?? []).filter((m) => m.supported).map((m) => m.type));
}

const ns = (name: string): KubeObject => ({ apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
const namespaces = { group: '', version: 'v1', plural: 'namespaces', namespaced: false };

async function createIfAbsent(client: KubeClient, path: string, body: KubeObject): Promise<void> {
  try {
    await client.request({ method: 'POST', path, body });
  } catch (err) {
    if (!isAlreadyExists(err)) throw err;
  }
}

/** What a Subscription may set besides the defaults: a starting version, annotations. */
export interface SubscribeOptions {
  startingCSV?: string;
  annotations?: Record<string, string>;
}

/** Creates the namespaces, OperatorGroup and Subscription of one package. */
export async function subscribe(
  client: KubeClient,
  plan: PackagePlan,
  source: { name: string; namespace: string },
  options: SubscribeOptions = {},
): Promise<void> {
  for (const n of [plan.namespace, ...plan.extraNamespaces])
    await createIfAbsent(client, collectionPath(namespaces), ns(n));
  await createIfAbsent(client, collectionPath(Resources.OperatorGroup, plan.namespace), {
    apiVersion: 'operators.coreos.com/v1',
    kind: 'OperatorGroup',
    metadata: { name: 'og', namespace: plan.namespace },
    spec: plan.targetNamespaces ? { targetNamespaces: plan.targetNamespaces } : {},
  } as KubeObject);
  await createIfAbsent(client, collectionPath(Resources.Subscription, plan.namespace), {
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: {
      name: plan.package,
      namespace: plan.namespace,
      ...(options.annotations ? { annotations: options.annotations } : {}),
    },
    spec: {
      name: plan.package,
      channel: plan.channel,
      source: source.name,
      sourceNamespace: source.namespace,
      installPlanApproval: 'Automatic',
      ...(options.startingCSV ? { startingCSV: options.startingCSV } : {}),
    },
  } as KubeObject);
}

/** Pods of one namespace, as far as the outcome needs them. */
export interface PodView {
  name: string;
  ready: boolean;
  /** Why it is not scheduled, when the scheduler said so. */
  unschedulable?: string;
}

/** What the cluster holds for one package's namespace. */
export interface PackageView {
  /** The package's own Subscription and those its dependencies got. */
  subscriptions: Subscription[];
  installPlans: InstallPlan[];
  csvs: ClusterServiceVersion[];
  pods: PodView[];
}

export type Outcome =
  | { kind: 'Succeeded'; csv: string }
  | { kind: 'Pending'; class: string; detail: string }
  | { kind: 'Failed'; class: string; detail: string };

/**
 * What became of one package: its CSV Succeeded, it failed for a reason that will not go away by
 * waiting (a failed InstallPlan, a failed CSV, a resolution failure), or it is still on its way.
 * `class` groups failures for a report; `detail` is the message that says what went wrong.
 */
export function outcomeOf(plan: PackagePlan, view: PackageView): Outcome {
  // The package's own Subscription is named after it (see subscribe).
  const subscription = view.subscriptions.find((s) => s.metadata.name === plan.package);
  const own =
    view.csvs.find((c) => c.metadata.name === subscription?.status?.installedCSV) ??
    view.csvs.find((c) => c.metadata.name === subscription?.status?.currentCSV);
  if (own?.status?.phase === 'Succeeded') return { kind: 'Succeeded', csv: own.metadata.name ?? '' };

  // Only the package's own plan and CSV decide its outcome: a dependency that fails (say, one
  // whose install modes the namespace's OperatorGroup does not support) may leave it installed.
  const ownName = subscription?.status?.currentCSV ?? subscription?.status?.installedCSV;
  const ownPlans = view.installPlans.filter(
    (ip) =>
      ip.metadata.name === subscription?.status?.installPlanRef?.name ||
      (ownName !== undefined && ip.spec.clusterServiceVersionNames.includes(ownName)),
  );
  const failedPlan = ownPlans.find((ip) => ip.status?.phase === 'Failed');
  if (failedPlan) {
    const message = failedPlan.status?.message ?? conditionMessage(failedPlan.status?.conditions) ?? '';
    return { kind: 'Failed', class: `InstallPlan Failed: ${messageClass(message)}`, detail: message };
  }
  const failedCsv = own?.status?.phase === 'Failed' ? own : undefined;
  if (failedCsv) {
    return {
      kind: 'Failed',
      class: `CSV Failed: ${failedCsv.status?.reason ?? '?'}`,
      detail: `${failedCsv.metadata.name}: ${failedCsv.status?.message ?? ''}`,
    };
  }
  const resolution = subscription?.status?.conditions?.find(
    (c) => c.type === 'ResolutionFailed' && c.status === 'True',
  );
  if (resolution) {
    return {
      kind: 'Failed',
      class: `ResolutionFailed: ${resolution.reason ?? '?'}`,
      detail: resolution.message ?? '',
    };
  }
  const unschedulable = view.pods.find((p) => p.unschedulable !== undefined);
  if (unschedulable) {
    return {
      kind: 'Pending',
      class: 'Pod unschedulable',
      detail: `${unschedulable.name}: ${unschedulable.unschedulable}`,
    };
  }
  if (own) {
    return {
      kind: 'Pending',
      class: `CSV ${own.status?.phase ?? 'without phase'}: ${own.status?.reason ?? '?'}`,
      detail: `${own.metadata.name}: ${own.status?.message ?? ''}`,
    };
  }
  const ip = ownPlans[0] ?? view.installPlans[0];
  if (ip) {
    return {
      kind: 'Pending',
      class: `InstallPlan ${ip.status?.phase ?? 'without phase'}`,
      detail: ip.status?.message ?? '',
    };
  }
  return {
    kind: 'Pending',
    class: 'no InstallPlan',
    detail: `subscription ${plan.namespace}/${plan.package}: state ${subscription?.status?.state ?? 'none'}`,
  };
}

function conditionMessage(conditions?: { message?: string }[]): string | undefined {
  return conditions?.find((c) => c.message)?.message;
}

/** A failure message without the names in it, so that failures of one kind count together. */
export function messageClass(message: string): string {
  if (/v1beta1.*not served|not served by Kubernetes/.test(message)) return 'removed API version';
  if (/field not declared in schema/.test(message)) return 'field not declared in schema';
  if (/Required value/.test(message)) return 'refused by schema: required value missing';
  if (/Unsupported value|Invalid value/.test(message)) return 'refused by schema: invalid value';
  if (/is not a kind Bosun installs/.test(message)) return 'unsupported kind';
  if (/forbidden|Forbidden/.test(message)) return 'forbidden';
  return message.replace(/"[^"]*"|\b[\w.-]+\/[\w.-]+\b/g, '…').slice(0, 80);
}

type Conditioned = KubeObject & { status?: PodStatus };

/**
 * What the cluster holds, kept current by watches (listing every InstallPlan and CSV of a cluster
 * with a catalog's worth of operators again and again takes longer than a request may), and read
 * by namespace.
 */
export class ClusterView {
  private readonly subscriptions: Informer<Subscription>;
  private readonly installPlans: Informer<InstallPlan>;
  private readonly csvs: Informer<ClusterServiceVersion>;
  private readonly pods: Informer<Conditioned>;

  constructor(client: KubeClient) {
    this.subscriptions = createInformer<Subscription>(client, Resources.Subscription);
    this.installPlans = createInformer<InstallPlan>(client, Resources.InstallPlan);
    this.csvs = createInformer<ClusterServiceVersion>(client, Resources.ClusterServiceVersion);
    this.pods = createInformer<Conditioned>(client, {
      group: '',
      version: 'v1',
      kind: 'Pod',
      plural: 'pods',
      namespaced: true,
    });
  }

  async start(): Promise<void> {
    for (const i of this.all()) i.start();
    await Promise.all(this.all().map((i) => i.synced()));
  }

  async stop(): Promise<void> {
    await Promise.all(this.all().map((i) => i.stop()));
  }

  /** One namespace's objects. */
  view(namespace: string): PackageView {
    return {
      subscriptions: this.subscriptions.list(namespace),
      installPlans: this.installPlans.list(namespace),
      // CSVs copied into a target namespace by an OperatorGroup are not this package's.
      csvs: this.csvs.list(namespace).filter((c) => c.status?.reason !== 'Copied'),
      pods: this.pods.list(namespace).map(podView),
    };
  }

  private all(): Informer<KubeObject>[] {
    return [this.subscriptions, this.installPlans, this.csvs, this.pods] as unknown as Informer<KubeObject>[];
  }
}

interface PodStatus {
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

export function podView(p: KubeObject & { status?: PodStatus }): PodView {
  const cond = (t: string) => p.status?.conditions?.find((c) => c.type === t);
  const scheduled = cond('PodScheduled');
  const view: PodView = { name: p.metadata?.name ?? '', ready: cond('Ready')?.status === 'True' };
  if (scheduled?.status === 'False' && scheduled.reason === 'Unschedulable')
    view.unschedulable = scheduled.message ?? 'unschedulable';
  return view;
}

/** Whether a CatalogSource has loaded its content. */
export const catalogReady = (cs: CatalogSource) => cs.status?.connectionState?.lastObservedState === 'READY';
