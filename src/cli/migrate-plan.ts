/**
 * The pure half of `bosun migrate subscription`: from the objects read (the Subscription, its
 * namespace's OperatorGroups and InstallPlans, its installed CSV, every Subscription,
 * ClusterExtension and CSV of the cluster, and what each ClusterCatalog serves of the package),
 * either the ClusterExtension that takes the operator over, or every reason it cannot, each
 * naming the object and the field.
 *
 * The extension takes over without installing anything again: it is annotated
 * MigratedFromAnnotation, so the ClusterExtension controller adopts the Subscription's installed
 * CSV (an ownerReference, no new InstallPlan) once it has Succeeded
 * (controllers/clusterextension.ts). What v1.2.0 cannot express is refused rather than
 * approximated: a group that targets some namespaces (v1.2.0 installs for all namespaces only),
 * dependencies (v1 resolves none), a Subscription's `spec.config` (v1 has no per-install
 * overrides, so the next upgrade would drop them).
 */
import type { Condition, LabelSelector } from '../apis/meta.js';
import { type ClusterExtension, OlmV1Group } from '../apis/olmv1.js';
import {
  Approval,
  type ClusterServiceVersion,
  CSVPhase,
  type InstallPlan,
  InstallPlanPhase,
  type OperatorGroup,
  type Subscription,
} from '../apis/operators.js';
import { PropertyType } from '../apis/fbc.js';
import { MigratedFromAnnotation } from '../controllers/clusterextension-plan.js';
import { isEmptySelector } from '../olm/selector.js';
import { fail, ok, type Problem, type Result } from '../util/result.js';

/** The label v1's catalogd puts on every ClusterCatalog, holding its name (a selector that names one catalog). */
export const CatalogNameLabel = 'olm.operatorframework.io/metadata.name';
/** The label OLM puts on a Subscription's InstallPlans. */
export const InstallPlanSubscriptionLabel = 'operators.coreos.com/subscription';

/** Properties of a catalog bundle that make it depend on another bundle; v1 resolves no dependency. */
const DependencyProperties: readonly string[] = [
  PropertyType.PackageRequired,
  PropertyType.GVKRequired,
  PropertyType.Constraint,
  PropertyType.LabelRequired,
];

/**
 * A name both an object and a label value can have: the extension's name is written into the
 * `olm.operatorframework.io/owner-name` label of what it installs (at most 63 characters), and
 * v1 requires a DNS-1123 name.
 */
const ExtensionNamePattern = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const MaxExtensionNameLength = 63;
/** v1.2.0's CRD rules for `channels` entries and `packageName` (DNS-1123 subdomains). */
const SubdomainPattern = ExtensionNamePattern;
const MaxSubdomainLength = 253;
/** A version v1.2.0's CRD accepts in `version` written as one exact version. */
const ExactVersionPattern =
  /^v?(0|[1-9]\d*)(\.(0|[1-9]\d*))?(\.(0|[1-9]\d*))?(-([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?(\+([0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*))?$/;

/** What a ClusterCatalog serves of the package, as the catalogd API answered (or why it could not be read). */
export interface CatalogOffer {
  name: string;
  labels: Record<string, string>;
  priority: number;
  /** Serving True and not made Unavailable: v1 resolves from it. */
  serving: boolean;
  bundles: { name: string; properties: { type: string; value?: unknown }[] }[];
  channels: { name: string; entries: { name: string }[] }[];
  /** Why its content could not be read; a catalog that cannot be read is not guessed at. */
  error?: string;
}

export interface MigrationInput {
  subscription: Subscription;
  /** The OperatorGroups of the Subscription's namespace. */
  operatorGroups: readonly OperatorGroup[];
  /** The Subscription's InstallPlans (by label or ownerReference). */
  installPlans: readonly InstallPlan[];
  /** The CSV `status.installedCSV` names, when it exists. */
  csv: ClusterServiceVersion | undefined;
  /** Every Subscription of the cluster. */
  subscriptions: readonly Subscription[];
  /** Every ClusterExtension of the cluster. */
  extensions: readonly ClusterExtension[];
  /** Every CSV of the cluster (copies OLM makes in target namespaces included or not: copies are skipped). */
  csvs: readonly ClusterServiceVersion[];
  catalogs: readonly CatalogOffer[];
  /** `--service-account`. */
  serviceAccount?: string;
}

export interface MigrationPlan {
  extension: ClusterExtension;
  namespace: string;
  subscription: string;
  csv: string;
  /** The CSV's uid: the object the extension must come to own, not a namesake. */
  csvUid: string;
  catalog: string;
  operatorGroup: string;
  installPlans: string[];
  /** What the plan decided that a user should know (a pinned version, a catalog selector). */
  notes: string[];
}

const subRef = (s: Subscription) => `Subscription ${s.metadata.namespace}/${s.metadata.name}`;
const q = JSON.stringify;

/** The plan, or every reason the Subscription cannot be migrated (all found in one pass). */
export function planMigration(input: MigrationInput): Result<MigrationPlan> {
  const sub = input.subscription;
  const name = sub.metadata.name ?? '';
  const namespace = sub.metadata.namespace ?? '';
  const object = subRef(sub);
  const pkg = sub.spec.name;
  const problems: Problem[] = [];
  const refuse = (p: Problem) => problems.push(p);

  // The extension's name and what v1.2.0's CRD accepts of the Subscription's fields.
  if (name.length > MaxExtensionNameLength || !ExtensionNamePattern.test(name))
    refuse({
      object,
      field: 'metadata.name',
      message: `${q(name)} cannot name a ClusterExtension: at most ${MaxExtensionNameLength} lowercase letters, digits, '-' and '.', starting and ending with a letter or digit (it becomes the owner-name label of what the extension installs)`,
    });
  if (pkg.length > MaxSubdomainLength || !SubdomainPattern.test(pkg))
    refuse({
      object,
      field: 'spec.name',
      message: `${q(pkg)} is not a package name v1 accepts (a DNS-1123 subdomain)`,
    });
  const channel = sub.spec.channel || undefined;
  if (channel !== undefined && (channel.length > MaxSubdomainLength || !SubdomainPattern.test(channel)))
    refuse({
      object,
      field: 'spec.channel',
      message: `${q(channel)} is not a channel name v1 accepts (a DNS-1123 subdomain)`,
    });
  if (sub.spec.config && Object.keys(sub.spec.config).length > 0)
    refuse({
      object,
      field: 'spec.config',
      message: `sets ${Object.keys(sub.spec.config).sort().join(', ')}, which a ClusterExtension cannot express (v1 has no per-install overrides: the next upgrade would drop them)`,
    });

  // The installed operator: there, Succeeded, and no install under way that deleting the Subscription would cut short.
  const installed = sub.status?.installedCSV;
  const csv = input.csv;
  if (!installed)
    refuse({ object, field: 'status.installedCSV', message: 'is not set: nothing is installed to migrate' });
  else if (!csv)
    refuse({
      object,
      field: 'status.installedCSV',
      message: `names ClusterServiceVersion ${namespace}/${installed}, which does not exist`,
    });
  else if (csv.status?.phase !== CSVPhase.Succeeded)
    refuse({
      object: `ClusterServiceVersion ${namespace}/${installed}`,
      field: 'status.phase',
      message: `is ${q(csv.status?.phase ?? '')}, not Succeeded: migrate an operator that is installed and healthy`,
    });
  for (const ip of input.installPlans) {
    const phase = ip.status?.phase ?? '';
    const running =
      phase === InstallPlanPhase.Installing ||
      (ip.spec.approved && phase !== InstallPlanPhase.Complete && phase !== InstallPlanPhase.Failed);
    if (running)
      refuse({
        object: `InstallPlan ${namespace}/${ip.metadata.name}`,
        field: 'status.phase',
        message: `is ${q(phase)} and approved: an install is under way (${ip.spec.clusterServiceVersionNames.join(', ')}); migrate once it is done`,
      });
  }

  // The OperatorGroup: exactly one, for all namespaces, as v1.2.0 installs.
  const group = groupOf(input.operatorGroups, namespace, refuse);

  // One front end per package.
  for (const other of input.subscriptions)
    if (other.spec.name === pkg && !(other.metadata.namespace === namespace && other.metadata.name === name))
      refuse({
        object,
        field: 'spec.name',
        message: `package ${q(pkg)} is also managed by ${subRef(other)}`,
      });
  for (const ext of input.extensions) {
    if (ext.spec?.source.catalog?.packageName === pkg)
      refuse({
        object,
        field: 'spec.name',
        message: `package ${q(pkg)} is already managed by ClusterExtension ${ext.metadata.name}`,
      });
    if (ext.metadata.name === name)
      refuse({
        object: `ClusterExtension ${name}`,
        message: 'already exists: delete it, or migrate under another name',
      });
  }

  // Dependencies: v1 resolves none. Bosun's extensions install what a bundle needs through
  // extensions generated for it, but here what it needs is managed already, by Subscriptions the
  // migration would leave beside it: such an operator is not carried over.
  if (csv) for (const p of requiredApis(csv, input.csvs, input.subscriptions)) refuse(p);

  // The catalog that serves the installed bundle, and a selector that names it.
  const chosen = installed ? catalogOf(input.catalogs, pkg, installed, channel, refuse) : undefined;

  // v1 requires a ServiceAccount; it is used only if the extension must make an OperatorGroup, which it does not here.
  const serviceAccount = input.serviceAccount || group?.spec?.serviceAccountName;
  if (!serviceAccount)
    refuse({
      object: group ? `OperatorGroup ${namespace}/${group.metadata.name}` : object,
      field: 'spec.serviceAccountName',
      message:
        'is not set, and a ClusterExtension requires spec.serviceAccount: give one with --service-account',
    });

  const manual = sub.spec.installPlanApproval === Approval.Manual;
  const version = csv?.spec.version ?? '';
  if (manual && csv && !ExactVersionPattern.test(version))
    refuse({
      object: `ClusterServiceVersion ${namespace}/${installed}`,
      field: 'spec.version',
      message: `${q(version)} is no version v1 can pin (a Manual Subscription is pinned to its installed version)`,
    });

  if (problems.length > 0 || !csv || !group || !chosen || !serviceAccount || !installed)
    return fail(problems);

  const notes: string[] = [];
  if (manual)
    notes.push(
      `pinned to version ${version}: the Subscription approves upgrades by hand and v1 has no approval; widen spec.source.catalog.version to upgrade`,
    );
  else
    notes.push(
      `no version: it keeps upgrading along ${channel ? `channel ${channel}` : "the package's default channel"} as v1 resolves it`,
    );
  if (chosen.selector)
    notes.push(
      `catalog selector ${formatSelector(chosen.selector)}: ClusterCatalog ${chosen.name} serves ${installed}, and other ClusterCatalogs serve package ${pkg} too`,
    );
  notes.push(
    `OperatorGroup ${namespace}/${group.metadata.name} stays: the engine reads the operator's target namespaces from it`,
  );

  const extension: ClusterExtension = {
    apiVersion: `${OlmV1Group}/v1`,
    kind: 'ClusterExtension',
    metadata: { name, annotations: { [MigratedFromAnnotation]: name } },
    spec: {
      namespace,
      serviceAccount: { name: serviceAccount },
      source: {
        sourceType: 'Catalog',
        catalog: {
          packageName: pkg,
          ...(channel ? { channels: [channel] } : {}),
          ...(manual ? { version } : {}),
          ...(chosen.selector ? { selector: chosen.selector } : {}),
        },
      },
    },
  };
  return ok({
    extension,
    namespace,
    subscription: name,
    csv: installed,
    csvUid: csv.metadata.uid ?? '',
    catalog: chosen.name,
    operatorGroup: group.metadata.name ?? '',
    installPlans: input.installPlans.map((ip) => ip.metadata.name ?? '').sort(),
    notes,
  });
}

function groupOf(
  groups: readonly OperatorGroup[],
  namespace: string,
  refuse: (p: Problem) => void,
): OperatorGroup | undefined {
  if (groups.length === 0) {
    refuse({
      object: `namespace ${namespace}`,
      message: 'has no OperatorGroup: the operator has no targets to carry over',
    });
    return undefined;
  }
  if (groups.length > 1) {
    refuse({
      object: `namespace ${namespace}`,
      message: `has ${groups.length} OperatorGroups (${groups
        .map((g) => g.metadata.name)
        .sort()
        .join(', ')}): the engine installs nothing there until one is left`,
    });
    return undefined;
  }
  const group = groups[0]!;
  const object = `OperatorGroup ${namespace}/${group.metadata.name}`;
  const targets = group.spec?.targetNamespaces ?? [];
  if (targets.length > 0) {
    refuse({
      object,
      field: 'spec.targetNamespaces',
      message: `targets ${targets.join(', ')}; a ClusterExtension (v1.2.0) installs for all namespaces only`,
    });
    return undefined;
  }
  if (!isEmptySelector(group.spec?.selector)) {
    const status = group.status?.namespaces ?? [];
    refuse({
      object,
      field: 'spec.selector',
      message: `targets the namespaces ${formatSelector(group.spec!.selector!)} selects${status.length ? ` (now ${status.join(', ')})` : ''}; a ClusterExtension (v1.2.0) installs for all namespaces only`,
    });
    return undefined;
  }
  return group;
}

/** OLM's label on the copies of a CSV it puts in each target namespace. */
const CopiedFromLabel = 'olm.copiedFrom';

/** A refusal for each API the CSV requires (CRDs and API services), naming which CSV and Subscription provide it. */
function requiredApis(
  csv: ClusterServiceVersion,
  csvs: readonly ClusterServiceVersion[],
  subscriptions: readonly Subscription[],
): Problem[] {
  const object = `ClusterServiceVersion ${csv.metadata.namespace}/${csv.metadata.name}`;
  const originals = csvs.filter(
    (c) => !c.metadata.labels?.[CopiedFromLabel] && c.metadata.uid !== csv.metadata.uid,
  );
  const providerOf = (owns: (c: ClusterServiceVersion) => boolean) => {
    const providers = originals.filter(owns).map((c) => {
      const by = subscriptions.find(
        (s) => s.metadata.namespace === c.metadata.namespace && s.status?.installedCSV === c.metadata.name,
      );
      return `ClusterServiceVersion ${c.metadata.namespace}/${c.metadata.name}${by ? ` of ${subRef(by)}` : ''}`;
    });
    return providers.length ? `provided by ${providers.join(', ')}` : 'provided by no CSV installed';
  };
  const out: Problem[] = [];
  for (const [i, crd] of (csv.spec.customresourcedefinitions?.required ?? []).entries())
    out.push({
      object,
      field: `spec.customresourcedefinitions.required[${i}]`,
      message: `requires ${crd.name} (${crd.version}), ${providerOf((c) => (c.spec.customresourcedefinitions?.owned ?? []).some((o) => o.name === crd.name))}; only operators without dependencies are migrated`,
    });
  for (const [i, api] of (csv.spec.apiservicedefinitions?.required ?? []).entries())
    out.push({
      object,
      field: `spec.apiservicedefinitions.required[${i}]`,
      message: `requires ${api.version}.${api.group}, ${providerOf((c) => (c.spec.apiservicedefinitions?.owned ?? []).some((o) => o.group === api.group && o.version === api.version))}; only operators without dependencies are migrated`,
    });
  return out;
}

interface ChosenCatalog {
  name: string;
  selector?: LabelSelector;
}

/**
 * The ClusterCatalog the extension resolves from: a serving one that offers the installed bundle
 * by name (in the Subscription's channel, when it names one) and has no dependency properties on
 * it; with a selector that picks it out when other catalogs serve the package too (v1 would
 * otherwise resolve across them, and refuse a tie).
 */
function catalogOf(
  catalogs: readonly CatalogOffer[],
  pkg: string,
  bundle: string,
  channel: string | undefined,
  refuse: (p: Problem) => void,
): ChosenCatalog | undefined {
  const serving = catalogs.filter((c) => c.serving);
  for (const c of serving)
    if (c.error !== undefined)
      refuse({ object: `ClusterCatalog ${c.name}`, message: `cannot be read: ${c.error}` });
  const readable = serving.filter((c) => c.error === undefined);
  if (readable.length < serving.length) return undefined;
  const ofPackage = readable.filter((c) => c.bundles.length > 0 || c.channels.length > 0);
  const offering = readable.filter((c) => c.bundles.some((b) => b.name === bundle));
  if (offering.length === 0) {
    refuse({
      object: `bundle ${bundle}`,
      message: `no serving ClusterCatalog offers it${ofPackage.length ? ` (package ${pkg} is served by ${ofPackage.map((c) => c.name).join(', ')})` : ''}: publish a ClusterCatalog with the catalog the Subscription installed from`,
    });
    return undefined;
  }
  // Of several catalogs offering it, the one v1 would prefer: the highest priority, if one alone has it.
  const top = Math.max(...offering.map((c) => c.priority));
  const best = offering.filter((c) => c.priority === top);
  if (best.length > 1) {
    refuse({
      object: `bundle ${bundle}`,
      message: `is offered at the same priority by ClusterCatalogs ${best.map((c) => c.name).join(', ')}: give one a higher spec.priority`,
    });
    return undefined;
  }
  const chosen = best[0]!;
  const where = `ClusterCatalog ${chosen.name}`;
  const entry = chosen.bundles.find((b) => b.name === bundle)!;
  for (const [i, p] of entry.properties.entries())
    if (DependencyProperties.includes(p.type))
      refuse({
        object: `${where}: bundle ${bundle}`,
        field: `properties[${i}]`,
        message: `${p.type} ${shown(p.value)}: the bundle depends on another operator, and only operators without dependencies are migrated`,
      });
  if (
    channel !== undefined &&
    !chosen.channels.some((ch) => ch.name === channel && ch.entries.some((e) => e.name === bundle))
  )
    refuse({
      object: where,
      message: `does not list ${bundle} in channel ${q(channel)} of package ${pkg}: the extension would not resolve it`,
    });
  if (ofPackage.length <= 1) return { name: chosen.name };
  // catalogd's webhook labels every ClusterCatalog with its name, and Bosun counts every catalog
  // as so labelled whether or not the label is set: a selector on it picks this catalog alone.
  return { name: chosen.name, selector: { matchLabels: { [CatalogNameLabel]: chosen.name } } };
}

/** A property value as a refusal shows it: a catalog's value has no length limit, a line should. */
const MaxShownValue = 200;
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? 'null';
  return text.length > MaxShownValue ? `${text.slice(0, MaxShownValue)}… (${text.length} characters)` : text;
}

function formatSelector(s: LabelSelector): string {
  const parts = [
    ...Object.entries(s.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`),
    ...(s.matchExpressions ?? []).map(
      (e) => `${e.key} ${e.operator}${e.values?.length ? ` (${e.values.join(',')})` : ''}`,
    ),
  ];
  return parts.join(', ');
}

/** The plan as the command prints it. */
export function renderPlan(plan: MigrationPlan): string {
  const e = plan.extension;
  const c = e.spec!.source.catalog!;
  const lines = [
    `Migrate Subscription ${plan.namespace}/${plan.subscription} to ClusterExtension ${e.metadata.name}:`,
    `  create ClusterExtension ${e.metadata.name}`,
    `    namespace:       ${plan.namespace}`,
    `    serviceAccount:  ${e.spec!.serviceAccount.name}`,
    `    packageName:     ${c.packageName}`,
    ...(c.channels ? [`    channels:        ${c.channels.join(', ')}`] : []),
    ...(c.version ? [`    version:         ${c.version}`] : []),
    ...(c.selector ? [`    selector:        ${formatSelector(c.selector)}`] : []),
    `    annotation:      ${MigratedFromAnnotation}=${plan.subscription}`,
    `  it adopts ClusterServiceVersion ${plan.namespace}/${plan.csv} (from ClusterCatalog ${plan.catalog}) without installing it again`,
    `  once it reports Installed on ${plan.csv} and owns that CSV: delete Subscription ${plan.namespace}/${plan.subscription}${plan.installPlans.length ? ` and InstallPlans ${plan.installPlans.join(', ')}` : ''}`,
    ...plan.notes.map((n) => `  note: ${n}`),
  ];
  return `${lines.join('\n')}\n`;
}

/**
 * `--timeout`: a Go-style duration (`2m`, `90s`, `1m30s`, `1h`) or a number of seconds. At least
 * a second: the extension cannot report Installed sooner.
 */
export function parseTimeout(text: string): number | undefined {
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text) * 1_000;
  const units: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== text) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * units[p[2]!]!, 0);
}

/** What a wait that timed out last saw, for its message. */
export function describeExtension(ext: ClusterExtension | undefined, csvOwned: boolean, csv: string): string {
  if (!ext) return 'the ClusterExtension is gone';
  const installed = ext.status?.conditions?.find((c: Condition) => c.type === 'Installed');
  const progressing = ext.status?.conditions?.find((c: Condition) => c.type === 'Progressing');
  const says = (c: Condition | undefined, t: string) =>
    c ? `${t} ${c.status} (${c.reason}${c.message ? `: ${c.message}` : ''})` : `no ${t} condition`;
  return [
    says(installed, 'Installed'),
    says(progressing, 'Progressing'),
    `installed bundle ${ext.status?.install?.bundle.name ?? 'none'}`,
    `ClusterServiceVersion ${csv} ${csvOwned ? 'owned by the extension' : 'not owned by the extension yet'}`,
  ].join('; ');
}
