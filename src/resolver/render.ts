/**
 * Explanations in words: a one-sentence message for a Subscription condition (what OLM puts in
 * ResolutionFailed, but readable), and the full prose `bosun explain` prints.
 */
import {
  type BundleRef,
  type CandidateVerdict,
  type Explanation,
  type Holder,
  type ObligationFailure,
  ObligationKind,
  type ObligationRef,
  type ResolutionResult,
  RuleOutKind,
} from './types.js';
import { escapeControls } from '../util/terminal.js';

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function where(b: BundleRef): string {
  if (b.installed) return 'installed';
  return `channel ${b.channel} of catalog ${b.catalog}`;
}

/** Where a bundle in the way came from and on whose behalf it is there: `installed`, `channel a of catalog c, for subscription s`. */
function held(h: Holder): string {
  return h.heldFor === 'installed' ? 'installed' : `${where(h.bundle)}, ${h.heldFor}`;
}

export function obligationText(o: ObligationRef): string {
  if (o.kind === ObligationKind.Subscription) return `subscription ${o.subscription}`;
  return `${o.of.bundle} requires ${o.wants}`;
}

/** Why one candidate was ruled out, in one clause. */
export function ruleOutText(v: CandidateVerdict): string {
  const b = v.candidate.bundle;
  const r = v.ruledOut;
  switch (r.kind) {
    case RuleOutKind.InvalidBundle:
      return `${b} is invalid: ${r.field} ${r.message}`;
    case RuleOutKind.Unsatisfiable:
    case RuleOutKind.RequirementFailed:
      return failureText(r.failure);
    case RuleOutKind.PackageConflict:
      return (
        `${b} (${where(v.candidate)}) conflicts with ${r.with.bundle.bundle} (${held(r.with)}): ` +
        `a namespace can have only one bundle of package ${r.package}` +
        (r.with.heldFor === 'installed' ? ` (a Subscription to ${r.package} would let it upgrade)` : '')
      );
    case RuleOutKind.GVKConflict:
      return (
        `${b} provides ${r.gvk}, which ${r.with.bundle.bundle} (${held(r.with)}) already provides: ` +
        'a namespace can have only one provider of an API'
      );
    case RuleOutKind.LaterFailure:
      return `choosing ${b} leaves this unmet: ${failureText(r.failure)}`;
    case RuleOutKind.SearchLimit:
      return `${b} was not decided: the search limit was reached`;
  }
}

/** One obligation's failure in a sentence or two, following a lone candidate's reason down. */
export function failureText(f: ObligationFailure): string {
  const subject = obligationText(f.obligation);
  const req = f.obligation.kind === ObligationKind.Requirement ? f.obligation : null;
  const because = req?.failureMessage ? ` (${req.failureMessage})` : '';
  if (f.candidates.length === 0) {
    if (f.note) return `${subject}: ${f.note}`;
    if (!req) return `${subject} has no candidates`;
    const none = `none of ${plural(f.catalogsSearched, 'catalog')} has one in a channel the namespace can use`;
    const hint = f.unusable
      .slice(0, 2)
      .map((u) => `${u.bundle} in catalog ${u.catalog} would, but ${u.why}`)
      .join('; ');
    return `${subject}${because}; ${none}${hint ? ` (${hint})` : ''}`;
  }
  if (f.candidates.length === 1) {
    const only = f.candidates[0]!;
    if (!req) return `${subject}: ${ruleOutText(only)}`;
    return `${subject}${because}; the only candidate cannot be used: ${ruleOutText(only)}`;
  }
  // The same bundle offered by several channels is usually ruled out the same way: say it once.
  const clauses = [
    ...new Set(
      f.candidates.map(ruleOutText).map((t) => t.replace(/ \(channel [^)]* of catalog [^)]*\)/g, '')),
    ),
  ];
  const shown = clauses.slice(0, 3).join('; ');
  const more = clauses.length > 3 ? `; and ${clauses.length - 3} more` : '';
  const sep = req ? `${because}; ` : ': ';
  return `${subject}${sep}none of its ${f.candidates.length} candidates can be used: ${shown}${more}`;
}

/**
 * The message for a failed resolution. When every choice at the top only failed because of
 * something later, the later failure is the real story: say that one.
 */
export function summarize(f: ObligationFailure): string {
  let at = f;
  for (let i = 0; i < 20; i++) {
    const first = at.candidates[0];
    if (!first || !at.candidates.every((c) => c.ruledOut.kind === RuleOutKind.LaterFailure)) break;
    if (first.ruledOut.kind !== RuleOutKind.LaterFailure) break;
    at = first.ruledOut.failure;
  }
  return failureText(at);
}

// ---- prose for `bosun explain` ----

function bundleLine(b: BundleRef): string {
  return `${b.bundle} (${b.version || 'no version'}, ${where(b)})`;
}

function failureTree(f: ObligationFailure, indent: string, out: string[], depth = 0): void {
  const o = f.obligation;
  out.push(
    `${indent}${o.kind === ObligationKind.Subscription ? subscriptionHead(o) : `${o.of.bundle} requires ${o.wants}`}`,
  );
  if (f.note) out.push(`${indent}  ${f.note}`);
  if (f.candidates.length === 0 && !f.note && o.kind === ObligationKind.Requirement) {
    out.push(
      `${indent}  no candidates: none of ${plural(f.catalogsSearched, 'catalog')} has one in a channel the namespace can use`,
    );
  }
  for (const u of f.unusable) out.push(`${indent}  not usable: ${u.bundle} (catalog ${u.catalog}): ${u.why}`);
  for (const v of f.candidates) {
    const r = v.ruledOut;
    const line = `${indent}  - ${bundleLine(v.candidate)}`;
    if ((r.kind === RuleOutKind.Unsatisfiable || r.kind === RuleOutKind.RequirementFailed) && depth < 8) {
      out.push(`${line}: ruled out, a requirement cannot be met:`);
      failureTree(r.failure, `${indent}      `, out, depth + 1);
    } else if (r.kind === RuleOutKind.LaterFailure && depth < 8) {
      out.push(`${line}: ruled out, choosing it leaves this unmet:`);
      failureTree(r.failure, `${indent}      `, out, depth + 1);
    } else out.push(`${line}: ruled out: ${ruleOutText(v)}`);
  }
  if (f.truncated) out.push(`${indent}  (more candidates left out)`);
}

function subscriptionHead(o: Extract<ObligationRef, { kind: 'subscription' }>): string {
  const installed = o.installed ? `, installed ${o.installed}` : '';
  return `subscription ${o.subscription} (package ${o.package}, channel ${o.channel || '(default)'}, catalog ${o.catalog}${installed})`;
}

function explanationProse(e: Explanation, out: string[]): void {
  for (const s of e.subscriptions) {
    const head = `subscription ${s.subscription} (package ${s.package}, channel ${s.channel || '(default)'}, catalog ${s.catalog})`;
    if (s.chosen) {
      const what = s.chosen.installed ? `stays at ${s.chosen.bundle}` : `gets ${bundleLine(s.chosen)}`;
      out.push(`${head}: ${what}`);
    } else out.push(`${head}${s.inConflict ? ': in conflict' : ': not resolved'}`);
    for (const p of s.passedOver) out.push(`  not ${p.candidate.bundle} (${p.candidate.version}): ${p.why}`);
  }
  for (const d of e.dependencies ?? []) {
    const how = d.chosen.installed ? `met by installed ${d.chosen.bundle}` : `met by ${bundleLine(d.chosen)}`;
    out.push(`${d.requiredBy.bundle} requires ${d.wants}: ${how}`);
    for (const p of d.passedOver) out.push(`  not ${p.candidate.bundle} (${p.candidate.version}): ${p.why}`);
  }
}

/** Everything about a resolution, as `bosun explain` prints it. */
export function explainText(result: ResolutionResult): string {
  const out: string[] = [];
  if (result.ok) {
    out.push(
      result.steps.length === 0
        ? 'Resolved: nothing to install or upgrade.'
        : `Resolved: ${plural(result.steps.length, 'bundle')} to install or upgrade.`,
    );
    for (const s of result.steps) {
      const replaces = s.replaces ? `, replacing ${s.replaces}` : '';
      const forWhat = s.subscription ? ` for subscription ${s.subscription}` : ' as a dependency';
      out.push(
        `  ${s.bundle} (${s.version}) from channel ${s.channel} of catalog ${s.catalog}${forWhat}${replaces}`,
      );
    }
    if (result.explanation) {
      out.push('', 'Why:');
      explanationProse(result.explanation, out);
    }
    return lines(out);
  }
  out.push(`Cannot resolve: ${result.message}`);
  for (const p of result.problems ?? [])
    out.push(`  ${[p.object, p.field, p.message].filter(Boolean).join(': ')}`);
  const e = result.explanation;
  if (e.failure) {
    out.push('', 'What was tried:');
    failureTree(e.failure, '  ', out);
  }
  if (e.conflict?.length) {
    out.push('', 'These constraints cannot all hold:');
    for (const c of e.conflict) out.push(`  - ${c.text}`);
  }
  const others = e.subscriptions.filter((s) => !s.inConflict);
  if (others.length && e.failure) {
    out.push(
      '',
      `Not resolved because the namespace resolves as a whole: ${others.map((s) => s.subscription).join(', ')}`,
    );
  }
  return lines(out);
}

/** The lines of a text, each kept one line: the names and messages they quote cannot start another. */
function lines(out: readonly string[]): string {
  return `${out.map((l) => escapeControls(l)).join('\n')}\n`;
}
