/**
 * The InstallPlan controller (key `namespace/name`). For each CSV the plan names it finds the
 * bundle in the catalog store, plans its steps with src/install (scoped by the namespace's
 * OperatorGroup) and writes them to `status.plan`, so a Manual plan can be read before it is
 * approved. Once approved it applies the steps phase by phase with server-side apply: CRDs first
 * (and waits, by requeueing, until they are Established), then ServiceAccounts, RBAC, the other
 * objects, and the CSV last; then the namespaced objects get their ownerReference to the CSV,
 * whose uid exists only now. Every apply is idempotent, so a restart at any point converges by
 * running the plan again; a finished plan (Complete or Failed) is left alone.
 * In a namespace whose OperatorGroup names a ServiceAccount, the steps are applied as that
 * ServiceAccount, and before the first one the plan is checked against what it may do
 * (./installplan-access.ts); a refusal fails the plan with nothing applied.
 */
import { InstallPlanConditionReason, InstallPlanConditionType } from '../apis/conditions.js';
import type { InstallPlan, InstallPlanCondition, InstallPlanStatus, Step } from '../apis/operators.js';
import { InstallPlanPhase, Resources, StepStatus } from '../apis/operators.js';
import { objectKey } from '../kube/cache.js';
import { objectPath } from '../kube/client.js';
import { crdStatusOf, isEstablished, isRefusedForGood, notEstablishedReason } from '../kube/crds.js';
import { unsafeCRDReplacements } from './installplan-crd-safety.js';
import { CRDUpgradeSafetyAnnotation } from './clusterextension-plan.js';
import { withPlanSummary } from './installplan-summary.js';
import { findCondition, formatTime, removeCondition, setCondition } from '../kube/conditions.js';
import { writeStatus } from '../kube/status.js';
import { formatApiError, isPermanentRejection, parseApiError } from '../kube/errors.js';
import type { CSVIdentity } from '../install/ownership.js';
import { type InstallStep, ownInstallSteps, stepObject, stepsByPhase } from '../install/plan.js';
import { subschema } from '../install/prune.js';
import { RollbackAnnotations } from '../install/rollback.js';
import { decodeAsTyped } from '../install/typed-decoding.js';
import type { Problem } from '../util/result.js';
import type { Controller, ScopedContext } from './context.js';
import { reportingForbidden } from './forbidden.js';
import { getIfPresent } from './objects.js';
import {
  csvDeploymentProblems,
  type PlanCondition,
  type PlannedSteps,
  planSteps,
  prunedMessage,
  prunedProblems,
  type RbacReport,
  rbacReportMessage,
  typedDecodingProblems,
  uniqueProblems,
  warningConditions,
  warningsMessage,
} from './installplan-steps.js';
import { checkScopedAccess } from './installplan-access.js';
import { deleteCreatedCSV, goneSubscription, liveUid } from './installplan-orphan.js';
import { installWriter } from './operatorgroup-scope.js';
import type { Applier } from '../kube/apply.js';

type PlannedInstall = Extract<PlannedSteps, { kind: 'steps' }>;

/** How soon to look again at a CRD that is not Established yet, or a catalog not loaded yet. */
const establishPollMs = 500;
const catalogWaitMs = 5_000;
/** How soon to look again for the ServiceAccount a scoped install waits for. */
const scopeWaitMs = 5_000;

const finished = (ip: InstallPlan) =>
  ip.status?.phase === InstallPlanPhase.Complete || ip.status?.phase === InstallPlanPhase.Failed;

const uses = {
  informers: ['crds', 'csvs', 'installPlans', 'namespaces', 'operatorGroups'] as const,
  ports: ['applier', 'bundles', 'catalogs', 'client', 'clock', 'events', 'schemas'] as const,
};

/** What this controller reads and writes through; the manager gives it nothing else. */
export type InstallPlanContext = ScopedContext<(typeof uses.informers)[number], (typeof uses.ports)[number]>;

const installPlanControllerOwn: Controller<(typeof uses.informers)[number], (typeof uses.ports)[number]> = {
  ...uses,
  name: 'installplan',
  kind: Resources.InstallPlan.kind,
  watch(ctx, enqueue) {
    const { informers } = ctx;
    const unfinishedIn = (ns?: string) => {
      for (const ip of informers.installPlans.list(ns)) {
        if (!finished(ip)) enqueue(objectKey(ip.metadata.namespace, ip.metadata.name));
      }
    };
    const onPlan = (ip: InstallPlan) => enqueue(objectKey(ip.metadata.namespace, ip.metadata.name));
    informers.installPlans.on({ add: onPlan, update: (_, ip) => onPlan(ip) });
    // The OperatorGroup scopes the RBAC a plan lists; catalogs hold the bundles; CRDs being
    // Established lets a waiting plan go on.
    const onGroup = (og: { metadata: { namespace?: string } }) => unfinishedIn(og.metadata.namespace);
    informers.operatorGroups.on({ add: onGroup, update: (_, og) => onGroup(og), delete: onGroup });
    informers.crds.on({ add: () => unfinishedIn(), update: () => unfinishedIn() });
    ctx.catalogs.onChange(() => unfinishedIn());
  },
  // Named steps: plan the steps (or wait for the catalog, or fail), show them and wait for
  // approval, then carry them out (execute).
  reconcile: (ctx) => async (key) => {
    let ip = ctx.informers.installPlans.get(key);
    if (ip === undefined || ip.metadata.deletionTimestamp || finished(ip)) return;
    // A pass often comes before the watch brings back what the last one wrote (the CRD it created
    // turns Established first). Read from the cache, an approved plan already under way would
    // look unstarted and be checked again (a round of SubjectAccessReviews, a CRD safety check
    // against the CRD just made): until the cache shows a step applied, the plan is read itself.
    if (ip.spec.approved && !started(ip)) {
      ip = await getIfPresent<InstallPlan>(
        ctx.client,
        objectPath(Resources.InstallPlan, ip.metadata.name ?? '', ip.metadata.namespace),
      );
      if (ip === undefined || ip.metadata.deletionTimestamp || finished(ip)) return;
    }
    // An unsubscribe is final: a plan whose Subscription is gone is left to the garbage
    // collector, neither planned nor run (./installplan-orphan.ts).
    const gone = await goneSubscription(ctx.client, ip);
    if (gone !== undefined) {
      ctx.log.info({ reason: gone }, 'installplan left alone: its subscription is gone');
      return;
    }

    const planned = await planSteps(ctx, ip);
    if (planned.kind === 'wait') {
      await setPlanStatus(ctx, ip, {
        phase: ip.status?.phase || InstallPlanPhase.Planning,
        message: planned.message,
      });
      return { requeueAfter: catalogWaitMs };
    }
    if (planned.kind === 'failed') {
      const lookups = planned.lookups ? { bundleLookups: planned.lookups } : {};
      await fail(ctx, ip, planned.message, undefined, undefined, planned.reason, lookups);
      return;
    }
    if (ip.metadata.annotations?.[RollbackAnnotations.rollbackFrom] !== undefined)
      planned.steps = keepLiveCRDs(ctx, planned.steps);
    ip = await withPlanSummary(ctx, ip, planned); // status.summary, once (installplan-summary.ts)
    // Bundle warnings are known before anything is applied: a Manual plan shows them too.
    const warned = warningConditions(
      ip.status?.conditions,
      { warnings: planned.warnings, rbac: planned.rbac },
      ctx.clock.now(),
    );
    if (!ip.spec.approved) {
      await setPlanStatus(ctx, ip, {
        phase: InstallPlanPhase.RequiresApproval,
        ...lookupsOf(planned),
        plan: planned.steps.map((s) => asStep(s, StepStatus.Unknown)),
        catalogSources: planned.catalogSources,
        conditions: warned,
      });
      return;
    }
    return execute(ctx, ip, planned, warned);
  },
};

/**
 * A rollback plan's steps without the CRDs that exist: a rollback keeps the newer CRD, so it
 * drops no stored version and no field a custom resource uses (src/install/rollback.ts checked
 * that the older operator's versions are still served).
 */
function keepLiveCRDs(ctx: InstallPlanContext, steps: InstallStep[]): InstallStep[] {
  return steps.filter(
    (s) =>
      s.resource.kind !== 'CustomResourceDefinition' || ctx.informers.crds.get(s.resource.name) === undefined,
  );
}

/**
 * One run of an approved plan. Every run applies the whole plan again (each apply is
 * idempotent), so what it collects (fields pruned, required fields filled in) is this run's.
 */
class PlanRun {
  /** The steps, with ownerReferences to their CSV once it exists. */
  steps: InstallStep[];
  readonly done = new Set<InstallStep>();
  /** Every field pruned from what this run applies. */
  readonly pruned: Problem[] = [];
  /** Required fields of the CSV that it lacked, given their zero values as OLM's decoding does. */
  readonly filled: Problem[] = [];
  readonly namespace: string;
  readonly base: Partial<InstallPlanStatus>;

  constructor(
    readonly ctx: InstallPlanContext,
    readonly ip: InstallPlan,
    readonly planned: PlannedInstall,
    /** The plan's conditions as they should be now. */
    readonly conditions: InstallPlanCondition[],
    /** What the steps are applied with: as the manager, or as the OperatorGroup's ServiceAccount. */
    readonly writer: Applier,
    /** The ServiceAccount the steps are applied as, when the OperatorGroup names one. */
    serviceAccount?: { namespace: string; name: string },
  ) {
    this.namespace = ip.metadata.namespace ?? '';
    // After a restart the CSV may exist already: own everything from the first apply.
    this.steps = ownByExistingCSVs(ctx, this.namespace, planned.steps);
    const startTime = ip.status?.startTime ?? formatTime(ctx.clock.now());
    this.base = {
      phase: InstallPlanPhase.Installing,
      catalogSources: planned.catalogSources,
      startTime,
      ...lookupsOf(planned),
    };
    // OLM's record of whom a plan is carried out as.
    if (serviceAccount)
      this.base.attenuatedServiceAccountRef = { apiVersion: 'v1', kind: 'ServiceAccount', ...serviceAccount };
  }

  status(): Step[] {
    return this.steps.map((s) => asStep(s, this.done.has(s) ? StepStatus.Created : StepStatus.Unknown));
  }

  warnings(): Problem[] {
    return [...this.planned.warnings, ...uniqueProblems(this.filled)];
  }

  report(now: number): InstallPlanCondition[] {
    return warningConditions(
      this.conditions,
      { warnings: this.warnings(), pruned: uniqueProblems(this.pruned), rbac: this.planned.rbac },
      now,
    );
  }
}

type PhaseOutcome =
  | { kind: 'applied' }
  | { kind: 'waiting'; crds: string[] }
  | { kind: 'failed'; message: string }
  | { kind: 'orphaned'; reason: string };

/**
 * Carries out an approved plan, as named steps: say it is being installed, apply it phase by
 * phase (stopping to wait for CRDs, or failing), and report it complete.
 */
async function execute(
  ctx: InstallPlanContext,
  ip: InstallPlan,
  planned: PlannedInstall,
  conditions: InstallPlanCondition[],
) {
  // Whom the steps are written as; a scope that cannot be used yet holds the plan back.
  const scoped = await installWriter(ctx, ip.metadata.namespace ?? '');
  if (scoped.kind === 'wait') return waitForScope(ctx, ip, planned, conditions, scoped.message);
  // What the plan waited for is there now: the InstallCheckFailed it said goes.
  const waited = findCondition(conditions as PlanCondition[], InstallPlanConditionType.Installed);
  if (waited?.reason === InstallPlanConditionReason.InstallCheckFailed)
    conditions = removeCondition(conditions as PlanCondition[], InstallPlanConditionType.Installed);
  const account = scoped.scope.kind === 'serviceAccount' ? scoped.scope : undefined;
  const run = new PlanRun(
    ctx,
    ip,
    planned,
    conditions,
    scoped.applier,
    account && { namespace: account.namespace, name: account.name },
  );
  // Refusals come before the first step, so that a refused plan has changed nothing.
  if (!started(ip)) {
    if (scoped.scope.kind === 'serviceAccount') {
      const groups = ctx.informers.operatorGroups.list(run.namespace);
      const verdict = await checkScopedAccess(ctx, planned, scoped.scope, groups[0]);
      if (verdict.kind === 'refused')
        return failRun(run, verdict.message, InstallPlanConditionReason[verdict.reason]);
    }
    // A CRD replacement that would strand stored objects refuses the plan too, unless the
    // ClusterExtension the plan is for turned the check off (v1's enforcement: None).
    const unsafe =
      ip.metadata.annotations?.[CRDUpgradeSafetyAnnotation] === 'None'
        ? []
        : await unsafeCRDReplacements(ctx.client, run.steps, (role) => ctx.applier.apply(role));
    if (unsafe.length > 0) {
      const message = `the upgrade would not be safe for what the cluster stores, so nothing was changed: ${unsafe.join('; ')}`;
      return failRun(run, message, InstallPlanConditionReason.UnsafeCRDUpgrade);
    }
  }
  // Say that the plan is being carried out before carrying it out (`kubectl get ip -w` shows it).
  if (ip.status?.phase !== InstallPlanPhase.Installing || !started(ip))
    await setPlanStatus(ctx, ip, { ...run.base, plan: run.status(), conditions });
  for (const group of stepsByPhase(run.steps)) {
    const outcome = await applyPhase(run, group.steps);
    if (outcome.kind === 'failed') return failRun(run, outcome.message);
    if (outcome.kind === 'waiting') return waitForCRDs(run, outcome.crds);
    if (outcome.kind === 'orphaned') {
      ctx.log.info({ reason: outcome.reason }, 'installplan stopped: its subscription is gone');
      return undefined;
    }
  }
  return complete(run);
}

/** Whether any step of the plan has been applied (its status says Created). */
function started(ip: InstallPlan): boolean {
  return (ip.status?.plan ?? []).some((s) => s.status === StepStatus.Created);
}

/**
 * A plan whose namespace's OperatorGroup scopes installs to a ServiceAccount that cannot be used
 * (missing, or several groups) waits, with nothing applied, and says why: Installed=False with
 * OLM's InstallCheckFailed. It is looked at again when an OperatorGroup changes, and every few
 * seconds for the ServiceAccount (ServiceAccounts have no informer here).
 */
async function waitForScope(
  ctx: InstallPlanContext,
  ip: InstallPlan,
  planned: PlannedInstall,
  conditions: InstallPlanCondition[],
  message: string,
) {
  const now = ctx.clock.now();
  const unchanged = ip.status?.message === message;
  await setPlanStatus(ctx, ip, {
    phase: InstallPlanPhase.Installing,
    catalogSources: planned.catalogSources,
    plan: planned.steps.map((s) => asStep(s, StepStatus.Unknown)),
    message,
    conditions: setIPCondition(
      conditions,
      'False',
      InstallPlanConditionReason.InstallCheckFailed,
      message,
      now,
    ),
  });
  if (!unchanged) await ctx.events.warning(ip, InstallPlanConditionReason.InstallCheckFailed, message);
  return { requeueAfter: scopeWaitMs };
}

/**
 * Applies one phase's steps. A CSV, once it exists, gives the objects of its bundle in its
 * namespace their ownerReference; a CRD the API server will not establish until it changes fails
 * the plan, naming why.
 */
async function applyPhase(run: PlanRun, steps: readonly InstallStep[]): Promise<PhaseOutcome> {
  const { ctx } = run;
  const waiting: string[] = [];
  for (const step of steps) {
    const isCSV = step.resource.kind === Resources.ClusterServiceVersion.kind;
    // Which CSV was there before this apply, to tell whether the apply created it.
    const before = isCSV ? await liveUid(ctx.client, run.namespace, step.resource.name) : undefined;
    let applied: unknown;
    try {
      applied = await run.writer.apply(await prunedStep(ctx, step, run.pruned, run.filled));
    } catch (err) {
      const api = parseApiError(err);
      // Bad requests, invalid and forbidden objects will not get better by retrying.
      if (api !== undefined && isPermanentRejection(api))
        return { kind: 'failed', message: `${describeStep(step)}: ${formatApiError(api)}` };
      throw err;
    }
    run.done.add(step);
    if (step.resource.kind === 'CustomResourceDefinition' && !isEstablished(crdStatusOf(applied))) {
      waiting.push(step.resource.name);
    }
    if (isCSV) {
      await ownByCSV(run, step, applied);
      const gone = await createdForNobody(run, step, before, applied);
      if (gone !== undefined) return { kind: 'orphaned', reason: gone };
    }
  }
  const refused = waiting.flatMap((name) => {
    const crd = ctx.informers.crds.get(name);
    return crd !== undefined && isRefusedForGood(crd)
      ? [`CustomResourceDefinition ${name} is not established: ${notEstablishedReason(crd)}`]
      : [];
  });
  if (refused.length > 0) return { kind: 'failed', message: refused.join('; ') };
  return waiting.length > 0 ? { kind: 'waiting', crds: waiting } : { kind: 'applied' };
}

/**
 * The Subscription may have been deleted while this run applied its steps (the CSV with it, by
 * the user, before this apply created it again). Asked after the CSV exists, so either the
 * deletion comes first and is seen here, or it comes after and whoever deletes the CSVs then
 * finds this one: a CSV this apply created for a Subscription that is gone is deleted again.
 * A CSV that was there before the apply is left alone (the user may keep an operator running
 * without its Subscription). Returns why, when the CSV was deleted.
 */
async function createdForNobody(
  run: PlanRun,
  step: InstallStep,
  before: string | undefined,
  applied: unknown,
): Promise<string | undefined> {
  const uid = (applied as { metadata?: { uid?: string } }).metadata?.uid;
  if (uid === undefined || uid === before) return undefined;
  const gone = await goneSubscription(run.ctx.client, run.ip);
  if (gone === undefined) return undefined;
  await deleteCreatedCSV(run.ctx.client, run.namespace, step.resource.name, uid);
  return `${gone}; CSV ${step.resource.name}, created meanwhile, was deleted again`;
}

/** The CSV exists now: the objects of its bundle in its namespace get their ownerReference. */
async function ownByCSV(run: PlanRun, step: InstallStep, applied: unknown) {
  const uid = (applied as { metadata?: { uid?: string } }).metadata?.uid ?? '';
  const owned = ownStepsOf(run.steps, { name: step.resource.name, namespace: run.namespace, uid });
  for (let i = 0; i < run.steps.length; i++) {
    const before = run.steps[i] as InstallStep;
    const after = owned[i] as InstallStep;
    if (after !== before) await run.writer.apply(await prunedStep(run.ctx, after, [], []));
    if (run.done.has(before)) run.done.add(after);
  }
  run.steps = owned;
}

async function failRun(run: PlanRun, message: string, reason?: InstallPlanConditionReason) {
  const { ctx, ip } = run;
  await fail(ctx, ip, message, run.status(), run.report(ctx.clock.now()), reason);
  await reportWarnings(ctx, ip, run.warnings(), uniqueProblems(run.pruned), run.planned.rbac);
}

async function waitForCRDs(run: PlanRun, crds: string[]) {
  await setPlanStatus(run.ctx, run.ip, {
    ...run.base,
    plan: run.status(),
    conditions: run.conditions,
    message: `waiting for CustomResourceDefinitions to be Established: ${crds.join(', ')}`,
  });
  return { requeueAfter: establishPollMs };
}

async function complete(run: PlanRun) {
  const { ctx, ip } = run;
  ctx.log.info({ steps: run.steps.length, pruned: run.pruned.length }, 'installplan complete');
  const now = ctx.clock.now();
  await setPlanStatus(ctx, ip, {
    ...run.base,
    phase: InstallPlanPhase.Complete,
    plan: run.status(),
    conditions: setIPCondition(run.report(now), 'True', undefined, '', now),
  });
  await reportWarnings(ctx, ip, run.warnings(), uniqueProblems(run.pruned), run.planned.rbac);
  await ctx.events.normal(ip, 'InstallSucceeded', `applied ${run.steps.length} steps`);
  return undefined;
}

/**
 * The step's object as it is applied: without the fields its kind's live schema does not
 * declare (OLM's create would have the API server drop them; server-side apply refuses them).
 * Each pruned field is added to `pruned`; for a CSV, so are the fields of its Deployment specs
 * that the Deployments will be applied without.
 */
async function prunedStep(ctx: InstallPlanContext, step: InstallStep, pruned: Problem[], filled: Problem[]) {
  let object = stepObject(step);
  if (object.kind === Resources.ClusterServiceVersion.kind) {
    // OLM creates a CSV from its Go types: nulls are gone and required fields a manifest lacks
    // are written as zero values.
    const typed = decodeAsTyped(object, await ctx.schemas.schemaFor(object.apiVersion, object.kind));
    filled.push(...typedDecodingProblems(object, typed));
    object = typed.value;
  }
  const result = await ctx.schemas.prune(object);
  pruned.push(...prunedProblems(object, result.fields));
  if (object.kind === Resources.ClusterServiceVersion.kind) {
    const deployment = await ctx.schemas.schemaFor('apps/v1', 'Deployment');
    const spec = deployment && subschema(deployment, ['spec']);
    if (spec !== undefined) pruned.push(...csvDeploymentProblems(result.value, spec));
  }
  return result.value;
}

/** A Warning Event on the plan for its bundle warnings, its pruned fields and its bundle RBAC. */
async function reportWarnings(
  ctx: InstallPlanContext,
  ip: InstallPlan,
  warnings: readonly Problem[],
  pruned: readonly Problem[],
  rbac: RbacReport,
) {
  const broad = rbacReportMessage(rbac);
  if (broad !== undefined) await ctx.events.warning(ip, broad.reason, broad.message);
  if (warnings.length > 0) {
    await ctx.events.warning(
      ip,
      InstallPlanConditionReason.BundleDecodedWithWarnings,
      warningsMessage(warnings),
    );
  }
  if (pruned.length > 0) {
    await ctx.events.warning(ip, InstallPlanConditionReason.UndeclaredFieldsPruned, prunedMessage(pruned));
  }
}

/** Objects in a namespace whose CSV exists already get their ownerReference right away. */
function ownByExistingCSVs(ctx: InstallPlanContext, namespace: string, steps: InstallStep[]): InstallStep[] {
  let out = steps;
  for (const step of steps) {
    if (step.resource.kind !== Resources.ClusterServiceVersion.kind) continue;
    const csv = ctx.informers.csvs.get(objectKey(namespace, step.resource.name));
    if (csv?.metadata.uid)
      out = ownStepsOf(out, { name: step.resource.name, namespace, uid: csv.metadata.uid });
  }
  return out;
}

/**
 * The steps with an ownerReference to `csv` on the objects of that CSV's bundle in its namespace
 * (a plan with several CSVs owns each object by its own CSV). Unchanged steps stay the same
 * objects, so callers can tell which ones changed.
 */
export function ownStepsOf(steps: readonly InstallStep[], csv: CSVIdentity): InstallStep[] {
  return steps.map((step) => {
    if (step.resolving !== csv.name) return step;
    const [owned] = ownInstallSteps([step], csv);
    return owned === undefined || owned.resource.manifest === step.resource.manifest ? step : owned;
  });
}

function describeStep(step: InstallStep): string {
  const ns = step.resource.namespace ? `${step.resource.namespace}/` : '';
  return `step ${step.resource.kind} ${ns}${step.resource.name}`;
}

/** OLM's Step: the CRD's schema has no namespace on a step resource (the manifest has it). */
function asStep(s: InstallStep, status: Step['status']): Step {
  const { namespace: _namespace, ...resource } = s.resource;
  return { resolving: s.resolving, resource, status };
}

/** The bundle images a plan unpacked, as OLM's status.bundleLookups; nothing when it unpacked none. */
function lookupsOf(planned: PlannedInstall): Partial<InstallPlanStatus> {
  return planned.lookups.length ? { bundleLookups: planned.lookups } : {};
}

async function fail(
  ctx: InstallPlanContext,
  ip: InstallPlan,
  message: string,
  plan?: Step[],
  conditions = ip.status?.conditions,
  reason: InstallPlanConditionReason = InstallPlanConditionReason.InstallComponentFailed,
  extra: Partial<InstallPlanStatus> = {},
) {
  await setPlanStatus(ctx, ip, {
    ...extra,
    phase: InstallPlanPhase.Failed,
    message,
    ...(plan ? { plan } : {}),
    conditions: setIPCondition(conditions, 'False', reason, message, ctx.clock.now()),
  });
  await ctx.events.warning(ip, reason, message);
}

function setIPCondition(
  conditions: readonly InstallPlanCondition[] | undefined,
  status: 'True' | 'False',
  reason: InstallPlanCondition['reason'],
  message: string,
  now: number,
): InstallPlanCondition[] {
  return setCondition<PlanCondition>(
    conditions as PlanCondition[] | undefined,
    {
      type: InstallPlanConditionType.Installed,
      status,
      lastUpdateTime: formatTime(now),
      ...(reason ? { reason } : {}),
      ...(message ? { message } : {}),
    },
    now,
  );
}

async function setPlanStatus(ctx: InstallPlanContext, ip: InstallPlan, changes: Partial<InstallPlanStatus>) {
  const prev = ip.status;
  const next: InstallPlanStatus = {
    phase: InstallPlanPhase.None,
    catalogSources: [],
    ...prev,
    ...changes,
  };
  if (changes.message === undefined) delete next.message;
  for (const k of Object.keys(next) as (keyof InstallPlanStatus)[]) if (next[k] === undefined) delete next[k];
  await writeStatus(ctx.applier, { resource: Resources.InstallPlan, object: ip, next });
}

/** A reconcile refused with 403 is reported on the object it reconciles (./forbidden.ts). */
export const installPlanController = reportingForbidden(installPlanControllerOwn, (ctx, key) =>
  [ctx.informers.installPlans.get(key)].filter((o) => o !== undefined),
);
