/**
 * `bosun plan -n <namespace> <subscription>`: what approving the Subscription's pending
 * InstallPlan would do, before anything changes. It reads the plan's steps, asks the API server
 * for a dry run of each (server-side apply, `dryRun=All`), compares that with the live object,
 * and checks the CRDs it would replace as the InstallPlan controller will (CRD safety). The path
 * through the channel graph is the InstallPlan controller's (`status.summary`, computed from the
 * catalog the manager holds); the RBAC delta compares the installed CSV's permissions with the
 * new CSV's.
 */
import type { KubeObject } from '../../apis/meta.js';
import {
  type ClusterServiceVersion,
  type InstallPlan,
  type InstallPlanPathHop,
  Resources,
  type Subscription,
} from '../../apis/operators.js';
import { unsafeCRDReplacements } from '../../controllers/installplan-crd-safety.js';
import { describeHop } from '../../install/plan-path.js';
import { type PreviewEntry, previewEntry } from '../../install/plan-preview.js';
import { csvRbacDelta, describeRule, type RbacDelta, RbacScope } from '../../install/rbac-delta.js';
import { Applier } from '../../kube/apply.js';
import { KubeClient, objectPath } from '../../kube/client.js';
import { isNotFound } from '../../kube/errors.js';
import { withClusterClient } from '../cluster-client.js';
import { UserError, UsageError } from '../../util/errors.js';
import { escapeControls } from '../../util/terminal.js';
import { type Command, str } from '../command.js';

interface PlanReport {
  subscription: string;
  namespace: string;
  from: string | null;
  to: string[];
  installPlan: { name: string; phase: string; approval: string; approved: boolean } | null;
  /**
   * The way through the catalog's channel, from the InstallPlan's `status.summary`: null when the
   * controller has not written one; no channel and no hops when there is none (a new install, or
   * no path from the installed CSV).
   */
  path: { channel: string | null; hops: InstallPlanPathHop[] } | null;
  crdSafety: { safe: boolean; findings: string[] };
  /** CSV permission rules (per service account) the upgrade adds and removes. */
  rbac: RbacDelta;
  objects: PreviewEntry[];
}

export const planCommand: Command = {
  name: 'plan',
  summary: "Show what approving a Subscription's pending InstallPlan would change, before it does",
  usage: '-n <namespace> <subscription>',
  description:
    "Reads the Subscription's InstallPlan and, for each of its steps, compares the live object with\n" +
    'what a server-side dry run says would be stored: create, change (with a unified diff) or\n' +
    'unchanged; the CSV being replaced is listed for deletion. The CRDs it would replace are checked\n' +
    'as the InstallPlan controller checks them (CRD safety, and every existing custom resource\n' +
    'against the new schema); an unsafe plan would be refused. Nothing is changed.',
  args: { min: 1, max: 1 },
  options: {
    namespace: { type: 'string', short: 'n', valueName: 'NS', description: "The Subscription's namespace" },
    kubeconfig: {
      type: 'string',
      valueName: 'FILE',
      description: 'The cluster (default: KUBECONFIG, ~/.kube/config or in-cluster)',
    },
    output: { type: 'string', short: 'o', valueName: 'FORMAT', description: 'text (default) or json' },
  },
  run: async ({ values, positionals, ctx }) => {
    const namespace = str(values, 'namespace');
    if (!namespace) throw new UsageError('plan: -n <namespace> is required');
    const output = str(values, 'output') ?? 'text';
    if (output !== 'text' && output !== 'json')
      throw new UsageError(`--output: "${output}" is not text or json`);
    return withClusterClient(values, ctx, async (client) => {
      const report = await planReport(client, new Applier(client), namespace, positionals[0]!);
      ctx.stdout.write(output === 'json' ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
      return 0;
    });
  },
};

async function get<T>(client: KubeClient, path: string): Promise<T | undefined> {
  return client.request<T>({ path }).catch((err: unknown) => {
    if (isNotFound(err)) return undefined;
    throw err;
  });
}

async function planReport(
  client: KubeClient,
  applier: Applier,
  namespace: string,
  name: string,
): Promise<PlanReport> {
  const sub = await get<Subscription>(client, objectPath(Resources.Subscription, name, namespace));
  if (!sub) throw new UserError(`Subscription ${namespace}/${name} does not exist`);
  const ipName = sub.status?.installPlanRef?.name;
  const ip = ipName
    ? await get<InstallPlan>(client, objectPath(Resources.InstallPlan, ipName, namespace))
    : undefined;
  const from = sub.status?.installedCSV ?? null;
  const report: PlanReport = {
    subscription: name,
    namespace,
    from,
    to: ip?.spec.clusterServiceVersionNames ?? [],
    installPlan: ip
      ? {
          name: ip.metadata.name ?? '',
          phase: ip.status?.phase ?? '',
          approval: ip.spec.approval,
          approved: ip.spec.approved,
        }
      : null,
    path: null,
    crdSafety: { safe: true, findings: [] },
    rbac: { added: [], removed: [] },
    objects: [],
  };
  const steps = ip?.status?.plan ?? [];
  if (!ip || steps.length === 0) return report;

  const summary = ip.status?.summary;
  if (summary) report.path = { channel: summary.channel ?? null, hops: summary.path ?? [] };
  const installed = from
    ? await get<ClusterServiceVersion>(client, objectPath(Resources.ClusterServiceVersion, from, namespace))
    : undefined;
  const newCSVs = steps
    .filter((s) => s.resource.kind === Resources.ClusterServiceVersion.kind && s.resource.manifest)
    .map((s) => JSON.parse(s.resource.manifest!) as ClusterServiceVersion);
  report.rbac = csvRbacDelta(installed ? [installed] : [], newCSVs);

  const findings = await unsafeCRDReplacements(client, steps);
  report.crdSafety = { safe: findings.length === 0, findings };
  for (const step of steps) {
    const manifest = step.resource.manifest;
    if (!manifest) continue;
    const desired = JSON.parse(manifest) as KubeObject;
    desired.metadata = { namespace, ...desired.metadata };
    const path = await applier.pathOf(desired).catch(() => undefined);
    const live = path ? await get<KubeObject>(client, path) : undefined;
    const after = await applier.dryRun(desired).then(
      (object) => ({ ok: true as const, object }),
      (err: unknown) => ({ ok: false as const, message: (err as Error).message }),
    );
    const scoped = path?.includes('/namespaces/') ? { namespace: desired.metadata.namespace } : {};
    report.objects.push(
      previewEntry({ kind: step.resource.kind, name: step.resource.name, ...scoped, live, after }),
    );
  }
  const to = report.to;
  if (from && !to.includes(from))
    report.objects.push({
      action: 'delete',
      kind: Resources.ClusterServiceVersion.kind,
      name: from,
      namespace,
      note: 'replaced, once the new version has succeeded',
    });
  return report;
}

function formatReport(r: PlanReport): string {
  const lines: string[] = [];
  if (!r.installPlan) return textOf([`Subscription ${r.namespace}/${r.subscription} has no InstallPlan yet`]);
  const ip = r.installPlan;
  lines.push(
    `Subscription ${r.namespace}/${r.subscription}: ${r.from ?? '(nothing installed)'} -> ${r.to.join(', ')}`,
    `InstallPlan ${ip.name}: ${ip.phase || 'not reconciled yet'}, approval ${ip.approval}${ip.approval === 'Manual' ? (ip.approved ? ', approved' : ', not approved yet') : ''}`,
  );
  if (r.objects.length === 0) {
    lines.push('its steps are not planned yet');
    return textOf(lines);
  }
  lines.push(...formatPath(r));
  lines.push(r.crdSafety.safe ? 'CRD safety: safe' : 'CRD safety: UNSAFE, the plan would be refused:');
  for (const f of r.crdSafety.findings) lines.push(`  - ${f}`);
  lines.push(...formatRbac(r.rbac));
  lines.push('Objects:');
  for (const o of r.objects) {
    const where = `${o.kind} ${o.namespace ? `${o.namespace}/` : ''}${o.name}`;
    lines.push(`  ${o.action.padEnd(9)} ${where}${o.note ? ` (${o.note})` : ''}`);
    if (o.diff)
      lines.push(
        ...o.diff
          .trimEnd()
          .split('\n')
          .map((l) => `      ${l}`),
      );
  }
  return textOf(lines);
}

/** The report's lines, each kept one line: names, findings and diffs from the cluster cannot start another. */
function textOf(lines: readonly string[]): string {
  return `${lines.map((l) => escapeControls(l)).join('\n')}\n`;
}

function formatPath(r: PlanReport): string[] {
  if (!r.from) return [];
  if (!r.path) return ['Path: not known yet (the InstallPlan controller has not written status.summary)'];
  if (!r.path.channel)
    return [`Path: none found in the catalog's channels from ${r.from} to ${r.to.join(', ')}`];
  return [`Path through channel ${r.path.channel}:`, ...r.path.hops.map((h) => `  ${describeHop(h)}`)];
}

function formatRbac(d: RbacDelta): string[] {
  if (d.added.length === 0 && d.removed.length === 0) return ['RBAC: no change to the CSV permissions'];
  const line = (sign: string) => (rule: RbacDelta['added'][number]) =>
    `  ${sign} ${rule.serviceAccount} (${rule.scope === RbacScope.Cluster ? 'cluster-wide' : 'namespaced'}): ${describeRule(rule)}`;
  return [
    'RBAC (CSV permissions, by service account):',
    ...d.added.map(line('+')),
    ...d.removed.map(line('-')),
  ];
}
