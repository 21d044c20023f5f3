/**
 * `resolve`: catalogs + what is installed + Subscriptions of one namespace → the bundles to
 * install, or an explanation of why there are none. Pure: the same input always gives the same
 * output, whatever order its lists are in.
 */
import type { Problem } from '../util/result.js';
import { ResolveContext } from './context.js';
import { Explainer } from './explain.js';
import type { Entry } from './model.js';
import { summarize } from './render.js';
import { type Blame, type Failure, type Solution, type SubscriptionObligation, search } from './search.js';
import { subscriptionObligation } from './subscription.js';
import {
  type DependencyReport,
  type Explanation,
  FailureReason,
  type InstallStep,
  type ResolutionInput,
  type ResolutionResult,
  type ResolveOptions,
  StepReason,
  type SubscriptionOutcome,
  type SubscriptionReport,
  SubscriptionState,
} from './types.js';
import { compareNewestFirst } from '../olm/version.js';

export const DEFAULT_MAX_STEPS = 200_000;

const byName = <T extends { name: string }>(a: T, b: T) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function resolve(input: ResolutionInput, options: ResolveOptions = {}): ResolutionResult {
  const problems = checkInput(input);
  if (problems.length > 0) {
    return {
      ok: false,
      reason: FailureReason.InvalidInput,
      message: problems.map((p) => [p.object, p.field, p.message].filter(Boolean).join(': ')).join('; '),
      explanation: { subscriptions: [] },
      problems,
    };
  }
  const maxSteps = options.maxSteps ?? DEFAULT_MAX_STEPS;
  const ctx = new ResolveContext(input.namespace, input.catalogs, input.installed);
  const subs = [...input.subscriptions].sort(byName).map((s) => subscriptionObligation(ctx, s));
  const referenced = new Set(subs.map((s) => s.sub.package));
  const fixed = [...ctx.installed.values()].filter((e) => !referenced.has(e.bundle.package));
  const explainer = new Explainer(ctx);

  const result = search(ctx, fixed, subs, maxSteps);
  if (result.ok) return success(ctx, explainer, subs, result.solution, options.explain === true);
  if ('limit' in result) {
    return {
      ok: false,
      reason: FailureReason.SearchLimitExceeded,
      message: `no answer after trying ${maxSteps} candidates; the catalogs' dependency graph is too tangled to search exhaustively`,
      explanation: { subscriptions: subs.map((s) => report(s, undefined, [], true)) },
    };
  }

  return unsatisfiable(ctx, explainer, fixed, subs, result, maxSteps);
}

/**
 * A failure, narrowed to the fewest Subscriptions that still fail together (dropping each in
 * turn and keeping it out when the rest still fail), then explained.
 */
function unsatisfiable(
  ctx: ResolveContext,
  explainer: Explainer,
  fixed: Entry[],
  subs: SubscriptionObligation[],
  first: { failure: Failure; blame: ReadonlySet<Blame> },
  maxSteps: number,
): ResolutionResult {
  let core = subs.filter((s) => first.blame.has(s.origin));
  let { failure, blame } = first;
  for (const s of [...core]) {
    if (core.length <= 1) break;
    const without = core.filter((c) => c !== s);
    const trial = search(ctx, fixed, without, maxSteps);
    if (!trial.ok && !('limit' in trial)) {
      core = without;
      ({ failure, blame } = trial);
    }
  }
  const publicFailure = explainer.failure(failure);
  const inCore = new Set(core.map((s) => s.sub.name));
  const explanation: Explanation = {
    subscriptions: subs.map((s) => report(s, undefined, [], inCore.has(s.sub.name))),
    failure: publicFailure,
    conflict: explainer.conflict(blame, publicFailure, new Map(subs.map((s) => [s.sub.name, s]))),
  };
  return {
    ok: false,
    reason: FailureReason.ConstraintsNotSatisfiable,
    message: summarize(publicFailure),
    explanation,
  };
}

function checkInput(input: ResolutionInput): Problem[] {
  const problems: Problem[] = [];
  const seenSubs = new Set<string>();
  for (const s of [...input.subscriptions].sort(byName)) {
    const object = `Subscription/${s.name || '(unnamed)'}`;
    if (!s.name) problems.push({ object, field: 'metadata.name', message: 'is empty' });
    if (seenSubs.has(s.name)) problems.push({ object, message: 'is given twice' });
    seenSubs.add(s.name);
    if (s.namespace !== input.namespace) {
      problems.push({
        object,
        field: 'metadata.namespace',
        message: `is ${s.namespace || '(empty)'}, but the resolution is for namespace ${input.namespace}`,
      });
    }
    if (!s.package)
      problems.push({ object, field: 'spec.name', message: 'is empty: name the package to install' });
    if (!s.source) problems.push({ object, field: 'spec.source', message: 'is empty: name the catalog' });
  }
  const seenCatalogs = new Set<string>();
  for (const k of input.catalogs.map((c) => `${c.namespace}/${c.name}`).sort()) {
    if (seenCatalogs.has(k)) problems.push({ object: `CatalogSource/${k}`, message: 'is given twice' });
    seenCatalogs.add(k);
  }
  const byPackage = new Map<string, string>();
  for (const op of [...input.installed].sort(byName)) {
    const object = `ClusterServiceVersion/${op.name}`;
    if (!op.package) problems.push({ object, field: 'package', message: 'is empty' });
    const other = byPackage.get(op.package);
    if (other !== undefined) {
      problems.push({
        object,
        message: `is in package ${op.package}, like ${other}: a namespace has at most one bundle per package`,
      });
    }
    byPackage.set(op.package, op.name);
  }
  return problems;
}

function success(
  ctx: ResolveContext,
  explainer: Explainer,
  subs: SubscriptionObligation[],
  solution: Solution,
  explain: boolean,
): ResolutionResult {
  const steps = orderSteps(ctx, solution);
  const subscriptions: SubscriptionOutcome[] = subs.map((s) => {
    const sel = solution.selections.get(s.sub.package)!;
    const e = sel.entry;
    return {
      subscription: s.sub.name,
      package: s.sub.package,
      channel: e.installed ? s.channel : e.channel,
      catalog: e.installed ? s.catalog.name : e.catalog.key.name,
      catalogNamespace: e.installed ? s.catalog.namespace : e.catalog.key.namespace,
      bundle: e.bundle.name,
      version: e.bundle.versionText,
      state: e.installed
        ? SubscriptionState.AtLatest
        : s.installed
          ? SubscriptionState.Upgrade
          : SubscriptionState.Install,
      ...(s.note ? { note: s.note } : {}),
    };
  });
  if (!explain) return { ok: true, steps, subscriptions };

  const reports = subs.map((s) => {
    const met = solution.met.find((m) => m.obligation === s)!;
    const passed = met.decision ? explainer.passed(met.decision) : [];
    return report(
      s,
      explainer.bundleRef(met.by.entry),
      [...passed, ...passedInChannel(ctx, s, met.by.entry)],
      false,
    );
  });
  const dependencies: DependencyReport[] = [];
  for (const m of solution.met) {
    if (m.obligation.kind !== 'requirement') continue;
    dependencies.push({
      requiredBy: explainer.bundleRef(m.obligation.of),
      wants: m.obligation.requirement.wants,
      chosen: explainer.bundleRef(m.by.entry),
      passedOver: m.decision ? explainer.passed(m.decision) : [],
    });
  }
  return { ok: true, steps, subscriptions, explanation: { subscriptions: reports, dependencies } };
}

function report(
  s: SubscriptionObligation,
  chosen: SubscriptionReport['chosen'],
  passedOver: SubscriptionReport['passedOver'],
  inConflict: boolean,
): SubscriptionReport {
  return {
    subscription: s.sub.name,
    package: s.sub.package,
    channel: s.channel,
    catalog: s.catalog.name,
    catalogNamespace: s.catalog.namespace,
    installed: s.installed?.bundle.name ?? null,
    ...(chosen ? { chosen } : {}),
    passedOver,
    ...(chosen ? {} : { inConflict }),
  };
}

/** Newer entries of the Subscription's channel that were never candidates, and why not. */
function passedInChannel(ctx: ResolveContext, s: SubscriptionObligation, chosen: Entry) {
  const cat = ctx.findCatalog(s.catalog);
  const graph = cat?.packages.get(s.sub.package)?.channels.get(s.channel);
  if (!cat || !graph || graph.problem) return [];
  const candidates = new Set(s.candidates.map((c) => c.bundle.name));
  const out = [];
  for (const name of [...graph.entries.keys()].sort()) {
    const b = cat.bundles.get(name);
    if (!b || candidates.has(name) || compareNewestFirst(b.version, chosen.bundle.version) >= 0) continue;
    const installed = s.installed?.bundle.name;
    const why = graph.skippedBy.has(name)
      ? `${graph.skippedBy.get(name)} skips it in channel ${graph.name}`
      : s.sub.startingCSV && !installed
        ? `spec.startingCSV asks for ${s.sub.startingCSV}`
        : installed
          ? `it does not upgrade from ${installed}: it neither replaces nor skips it, and its skipRange does not include ${s.installed?.bundle.versionText}`
          : `it is not on the upgrade chain of channel ${graph.name}`;
    out.push({
      candidate: {
        package: b.package,
        bundle: b.name,
        version: b.versionText,
        catalog: cat.info.key.name,
        catalogNamespace: cat.info.key.namespace,
        channel: graph.name,
      },
      why,
    });
  }
  return out;
}

/** The steps, dependencies before the bundles that need them; otherwise by package name. */
function orderSteps(ctx: ResolveContext, solution: Solution): InstallStep[] {
  const needs = new Map<string, Set<string>>();
  for (const m of solution.met) {
    if (m.obligation.kind !== 'requirement') continue;
    const from = m.obligation.of.bundle.package;
    const to = m.by.entry.bundle.package;
    if (from === to) continue;
    const set = needs.get(from) ?? new Set<string>();
    set.add(to);
    needs.set(from, set);
  }
  const changed = [...solution.selections.values()]
    .filter((s) => !s.entry.installed)
    .sort((a, b) => (a.entry.bundle.package < b.entry.bundle.package ? -1 : 1));
  const byPackage = new Map(changed.map((s) => [s.entry.bundle.package, s]));
  const ordered: InstallStep[] = [];
  const visited = new Set<string>();
  const visit = (pkg: string) => {
    if (visited.has(pkg)) return;
    visited.add(pkg);
    for (const dep of [...(needs.get(pkg) ?? [])].sort()) visit(dep);
    const sel = byPackage.get(pkg);
    if (!sel) return;
    const e = sel.entry;
    ordered.push({
      package: e.bundle.package,
      bundle: e.bundle.name,
      version: e.bundle.versionText,
      catalog: e.catalog.key.name,
      catalogNamespace: e.catalog.key.namespace,
      channel: e.channel,
      replaces: ctx.installed.get(e.bundle.package)?.bundle.name ?? null,
      reason: sel.subscription ? StepReason.Subscription : StepReason.Dependency,
      ...(sel.subscription ? { subscription: sel.subscription } : {}),
      ...(e.bundle.image ? { image: e.bundle.image } : {}),
    });
  };
  for (const s of changed) visit(s.entry.bundle.package);
  return ordered;
}
