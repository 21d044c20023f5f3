/**
 * `status.summary` of an InstallPlan: what approving it would do, in short, for whoever reads
 * `kubectl get ip -o yaml` before approving a Manual plan (`bosun plan` shows it in full, with a
 * diff per object). Written once, when the plan's steps are first planned, and kept after:
 * - `from`: the installed CSV of the same package in the plan's namespace, and `to`;
 * - `channel` and `path`: the shortest way from one to the other through the channels of the
 *   plan's catalog (as the manager's catalog store holds it), each hop with its edge;
 * - `objects`: how many steps' objects do not exist yet and how many do (read once, one GET per
 *   step: no dry run), and the CSV it replaces;
 * - `rbac`: how many CSV permission rules are added and removed.
 * - `crdSafety`: for a plan awaiting approval, the CRD safety check as it is now (approving runs
 *   it again, and that verdict decides); an approved plan runs it at once anyway.
 * A summary that cannot be computed (a read failed) is left out and tried again next time: it
 * never holds up the plan.
 */
import type { ChannelDoc, DeclarativeConfig } from '../apis/fbc.js';
import type { KubeObject } from '../apis/meta.js';
import {
  type ClusterServiceVersion,
  type InstallPlan,
  InstallPlanPhase,
  type InstallPlanStatus,
  type InstallPlanSummary,
  Resources,
} from '../apis/operators.js';
import { versionOf } from '../catalog/publish.js';
import { CopiedFromLabel } from '../install/ownership.js';
import { type UpgradePath, upgradePath } from '../install/plan-path.js';
import type { InstallStep } from '../install/plan.js';
import { csvRbacDelta } from '../install/rbac-delta.js';
import { objectKey } from '../kube/cache.js';
import { isNotFound } from '../kube/errors.js';
import { writeStatus } from '../kube/status.js';
import { parseTolerant } from '../olm/version.js';
import type { CatalogRef } from '../catalog/content/store.js';
import type { InstallPlanContext } from './installplan.js';
import { unsafeCRDReplacements } from './installplan-crd-safety.js';
import { locateBundle } from './installplan-steps.js';
import { PropertiesAnnotation } from './subscription-plan.js';

/**
 * The plan with its summary: written to its status when it has none yet (a separate status
 * write), returned with it, so that later writes of the same reconcile keep it.
 */
export async function withPlanSummary(
  ctx: InstallPlanContext,
  ip: InstallPlan,
  planned: { steps: readonly InstallStep[] },
): Promise<InstallPlan> {
  if (ip.status?.summary !== undefined) return ip;
  let summary: InstallPlanSummary;
  try {
    summary = await planSummary(ctx, ip, planned.steps);
  } catch (err) {
    ctx.log.debug({ err }, 'installplan summary not computed');
    return ip;
  }
  const status: InstallPlanStatus = {
    phase: InstallPlanPhase.None,
    catalogSources: [],
    ...ip.status,
    summary,
  };
  await writeStatus(ctx.applier, { resource: Resources.InstallPlan, object: ip, next: status });
  return { ...ip, status };
}

async function planSummary(
  ctx: InstallPlanContext,
  ip: InstallPlan,
  steps: readonly InstallStep[],
): Promise<InstallPlanSummary> {
  const to = ip.spec.clusterServiceVersionNames;
  const upgrade = findUpgrade(ctx, ip);
  const namespace = ip.metadata.namespace ?? '';
  const exists = await Promise.all(steps.map((s) => stepObjectExists(ctx, namespace, s)));
  const newCSVs = steps
    .filter((s) => s.resource.kind === Resources.ClusterServiceVersion.kind)
    .map((s) => JSON.parse(s.resource.manifest) as ClusterServiceVersion);
  // Whoever approves a Manual plan sees the CRD verdict before approving (the check runs again then).
  const crdFindings = ip.spec.approved
    ? undefined
    : await unsafeCRDReplacements(ctx.client, steps, (role) => ctx.applier.apply(role));
  return summarize({ to, ...upgrade, newCSVs, exists, ...(crdFindings ? { crdFindings } : {}) });
}

export interface SummaryInput {
  to: readonly string[];
  /** The installed CSV the plan upgrades. */
  from?: ClusterServiceVersion;
  path?: UpgradePath;
  newCSVs: readonly ClusterServiceVersion[];
  /** For each step, whether its object exists now. */
  exists: readonly boolean[];
  /** The CRD safety findings, for a plan awaiting approval. */
  crdFindings?: readonly string[];
}

/** The summary from what was read. Pure. */
export function summarize(input: SummaryInput): InstallPlanSummary {
  const from = input.from?.metadata.name;
  const replaced = from !== undefined && !input.to.includes(from);
  const rbac = csvRbacDelta(input.from ? [input.from] : [], input.newCSVs);
  const present = input.exists.filter(Boolean).length;
  return {
    ...(from !== undefined ? { from } : {}),
    to: [...input.to],
    ...(input.path ? { channel: input.path.channel, path: input.path.hops } : {}),
    objects: { create: input.exists.length - present, present, delete: replaced ? 1 : 0 },
    rbac: { added: rbac.added.length, removed: rbac.removed.length },
    ...(input.crdFindings
      ? { crdSafety: { safe: input.crdFindings.length === 0, findings: [...input.crdFindings] } }
      : {}),
  };
}

/**
 * The installed CSV the plan upgrades, and the path to the plan's CSV: for the first CSV of the
 * plan with an installed CSV of its package in the namespace.
 */
function findUpgrade(
  ctx: InstallPlanContext,
  ip: InstallPlan,
): { from?: ClusterServiceVersion; path?: UpgradePath } {
  const namespace = ip.metadata.namespace ?? '';
  const to = ip.spec.clusterServiceVersionNames;
  const csvs = ctx.informers.csvs.list(namespace);
  for (const target of to) {
    const located = locateBundle(ctx.catalogs, ip, target);
    if (located.kind !== 'found') continue;
    const { source } = located;
    const pkg = located.bundle.package;
    const packageOf = (csv: ClusterServiceVersion) =>
      ctx.catalogs.findBundle(source, csv.metadata.name ?? '')?.package ?? annotatedPackage(csv);
    const from = installedOf(csvs, to, (c) => packageOf(c) === pkg);
    if (!from) continue;
    const config = ctx.catalogs.get(source)?.config;
    if (!config) return { from };
    const fromName = from.metadata.name ?? '';
    const path = upgradePath({
      channels: packageChannels(config, pkg, target),
      from: fromName,
      to: target,
      versionOf: (name) =>
        (name === fromName ? csvVersion(from) : undefined) ?? catalogVersion(ctx, source, name),
    });
    return { from, ...(path ? { path } : {}) };
  }
  return {};
}

/**
 * Of the CSVs in a namespace, the installed one of a package (`isOfPackage`): not a copy, not
 * being deleted, not one the plan installs; of several (an upgrade under way), the one no other
 * replaces.
 */
export function installedOf(
  csvs: readonly ClusterServiceVersion[],
  planned: readonly string[],
  isOfPackage: (csv: ClusterServiceVersion) => boolean,
): ClusterServiceVersion | undefined {
  const live = csvs.filter(
    (c) =>
      c.metadata.labels?.[CopiedFromLabel] === undefined &&
      !c.metadata.deletionTimestamp &&
      !planned.includes(c.metadata.name ?? '') &&
      isOfPackage(c),
  );
  const replaced = new Set(live.map((c) => c.spec.replaces));
  return live.filter((c) => !replaced.has(c.metadata.name)).sort(byName)[0] ?? [...live].sort(byName)[0];
}

const byName = (a: ClusterServiceVersion, b: ClusterServiceVersion) =>
  (a.metadata.name ?? '').localeCompare(b.metadata.name ?? '');

/** The package's channels that list `target`, the default channel first, then by name. */
export function packageChannels(
  config: Pick<DeclarativeConfig, 'packages' | 'channels'>,
  pkg: string,
  target: string,
): ChannelDoc[] {
  const defaultChannel = config.packages.find((p) => p.name === pkg)?.defaultChannel;
  return config.channels
    .filter((c) => c.package === pkg && c.entries.some((e) => e.name === target))
    .sort(
      (a, b) =>
        Number(b.name === defaultChannel) - Number(a.name === defaultChannel) || a.name.localeCompare(b.name),
    );
}

function catalogVersion(ctx: InstallPlanContext, source: CatalogRef, name: string): string | undefined {
  const bundle = ctx.catalogs.findBundle(source, name);
  return bundle ? versionOf(bundle) : undefined;
}

/** `spec.version` as OLM reads it (blang's ParseTolerant), as the resolver does. */
function csvVersion(csv: ClusterServiceVersion): string | undefined {
  const text = csv.spec.version;
  return text === undefined ? undefined : parseTolerant(text)?.text;
}

function annotatedPackage(csv: ClusterServiceVersion): string | undefined {
  const text = csv.metadata.annotations?.[PropertiesAnnotation];
  if (!text) return undefined;
  try {
    const parsed = JSON.parse(text) as {
      properties?: { type?: string; value?: { packageName?: unknown } }[];
    };
    const name = parsed.properties?.find((p) => p.type === 'olm.package')?.value?.packageName;
    return typeof name === 'string' ? name : undefined;
  } catch {
    return undefined;
  }
}

/** Whether a step's object exists: CRDs and CSVs from the caches, the others by one GET. */
async function stepObjectExists(
  ctx: InstallPlanContext,
  planNamespace: string,
  step: InstallStep,
): Promise<boolean> {
  const { kind, name, namespace } = step.resource;
  if (kind === 'CustomResourceDefinition') return ctx.informers.crds.get(name) !== undefined;
  if (kind === Resources.ClusterServiceVersion.kind)
    return ctx.informers.csvs.get(objectKey(namespace ?? planNamespace, name)) !== undefined;
  const object = JSON.parse(step.resource.manifest) as KubeObject;
  const path = await ctx.applier.pathOf(
    namespace ? { ...object, metadata: { ...object.metadata, namespace } } : object,
  );
  return ctx.client.request({ path }).then(
    () => true,
    (err: unknown) => {
      if (isNotFound(err)) return false;
      throw err;
    },
  );
}
