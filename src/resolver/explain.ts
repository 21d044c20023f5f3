/**
 * Turns the search's internal record into the structured explanation users read: for each
 * candidate, which catalog, channel and bundle it was and what ruled it out; for requirements
 * nobody can meet, the bundles that would match but that the namespace cannot use; and the
 * smallest set of constraints that conflict.
 */
import { bundlesMatching } from './catalog-index.js';
import type { ResolveContext } from './context.js';
import { type Entry, gvkText, type Requirement } from './model.js';
import { ruleOutText } from './render.js';
import type {
  Attempt,
  Blame,
  Decision,
  Failure,
  Obligation,
  Selection,
  SubscriptionObligation,
} from './search.js';
import {
  type BundleRef,
  type CandidateVerdict,
  type ConflictingConstraint,
  ConstraintKind,
  type Holder,
  type ObligationFailure,
  ObligationKind,
  type ObligationRef,
  type Passed,
  type RuleOut,
  RuleOutKind,
  type Unusable,
} from './types.js';

/** Explanations stay readable (and small) past this many candidate verdicts. */
const MAX_VERDICTS = 300;
const MAX_STATIC_DEPTH = 4;

export class Explainer {
  private verdicts = 0;

  constructor(private readonly ctx: ResolveContext) {}

  bundleRef(e: Entry): BundleRef {
    return {
      package: e.bundle.package,
      bundle: e.bundle.name,
      version: e.bundle.versionText,
      catalog: e.catalog.key.name,
      catalogNamespace: e.catalog.key.namespace,
      channel: e.channel,
      ...(e.installed ? { installed: true } : {}),
    };
  }

  obligationRef(ob: Obligation): ObligationRef {
    if (ob.kind === 'subscription') {
      return {
        kind: ObligationKind.Subscription,
        subscription: ob.sub.name,
        package: ob.sub.package,
        channel: ob.channel,
        catalog: ob.catalog.name,
        catalogNamespace: ob.catalog.namespace,
        installed: ob.installed?.bundle.name ?? null,
      };
    }
    return this.requirementRef(ob.requirement, ob.of);
  }

  private requirementRef(req: Requirement, of: Entry): ObligationRef {
    return {
      kind: ObligationKind.Requirement,
      of: this.bundleRef(of),
      type: req.type,
      wants: req.wants,
      ...(req.failureMessage ? { failureMessage: req.failureMessage } : {}),
    };
  }

  holder(sel: Selection): Holder {
    return { bundle: this.bundleRef(sel.entry), heldFor: sel.heldFor };
  }

  /** A failure the search recorded, with every candidate's verdict. */
  failure(f: Failure): ObligationFailure {
    const ob = f.obligation;
    const out: ObligationFailure = {
      obligation: this.obligationRef(ob),
      candidates: [],
      catalogsSearched: this.ctx.catalogs.length,
      unusable: [],
    };
    if (ob.kind === 'subscription' && ob.note) out.note = ob.note;
    for (const a of f.attempts) {
      if (++this.verdicts > MAX_VERDICTS) {
        out.truncated = true;
        break;
      }
      out.candidates.push(this.verdict(a));
    }
    const noneLive = out.candidates.every(
      (c) => c.ruledOut.kind === RuleOutKind.InvalidBundle || c.ruledOut.kind === RuleOutKind.Unsatisfiable,
    );
    if (ob.kind === 'requirement' && noneLive) {
      out.unusable = this.unusable(ob.requirement, ob.of);
    }
    return out;
  }

  verdict(a: Attempt): CandidateVerdict {
    const candidate = this.bundleRef(a.entry);
    const why = a.why;
    switch (why.kind) {
      case 'dead':
        return { candidate, ruledOut: this.deadRuleOut(a.entry, 0) };
      case 'package':
        return {
          candidate,
          ruledOut: {
            kind: RuleOutKind.PackageConflict,
            package: a.entry.bundle.package,
            with: this.holder(why.holder),
          },
        };
      case 'gvk':
        return {
          candidate,
          ruledOut: { kind: RuleOutKind.GVKConflict, gvk: keyText(why.gvk), with: this.holder(why.holder) },
        };
      case 'later': {
        const nested = why.failure.obligation;
        const own = nested.kind === 'requirement' && nested.of.id === a.entry.id;
        const failure = this.failure(why.failure);
        return {
          candidate,
          ruledOut: own
            ? { kind: RuleOutKind.RequirementFailed, failure }
            : { kind: RuleOutKind.LaterFailure, failure },
        };
      }
    }
  }

  /** Why a candidate can never be chosen, with the requirement nobody can meet spelled out. */
  deadRuleOut(e: Entry, depth: number): RuleOut {
    const cause = this.ctx.deadCause(e);
    if (!cause) return { kind: RuleOutKind.SearchLimit };
    if (cause.kind === 'invalid')
      return { kind: RuleOutKind.InvalidBundle, field: cause.field, message: cause.message };
    return { kind: RuleOutKind.Unsatisfiable, failure: this.staticFailure(cause.requirement, e, depth + 1) };
  }

  private staticFailure(req: Requirement, of: Entry, depth: number): ObligationFailure {
    const out: ObligationFailure = {
      obligation: this.requirementRef(req, of),
      candidates: [],
      catalogsSearched: this.ctx.catalogs.length,
      unusable: this.unusable(req, of),
    };
    const providers = this.ctx
      .requirementCandidates(req, of)
      .filter((c) => c.bundle.package !== of.bundle.package);
    for (const c of providers) {
      if (depth > MAX_STATIC_DEPTH || ++this.verdicts > MAX_VERDICTS) {
        out.truncated = true;
        break;
      }
      out.candidates.push({ candidate: this.bundleRef(c), ruledOut: this.deadRuleOut(c, depth) });
    }
    return out;
  }

  /**
   * Bundles that satisfy `req` but that the namespace cannot use: in the dependent's own package,
   * skipped in their channel, off the upgrade chain, or in a broken channel.
   */
  unusable(req: Requirement, of: Entry): Unusable[] {
    const out: Unusable[] = [];
    for (const cat of this.ctx.catalogs) {
      const matching = [...bundlesMatching(cat, req.hint)].sort((x, y) => (x.name < y.name ? -1 : 1));
      for (const b of matching) {
        if (!req.test(b)) continue;
        const base = { bundle: b.name, package: b.package, catalog: cat.info.key.name };
        if (b.package === of.bundle.package) {
          out.push({
            ...base,
            why: `it is in package ${b.package}, the package of ${of.bundle.name} itself`,
          });
          continue;
        }
        const pkg = cat.packages.get(b.package);
        const channels = [...(pkg?.channels.values() ?? [])]
          .filter((g) => g.entries.has(b.name))
          .sort((x, y) => (x.name < y.name ? -1 : 1));
        if (channels.length === 0) {
          out.push({ ...base, why: 'it is in no channel' });
          continue;
        }
        const candidate = channels.some((g) => !g.problem && g.order.includes(b.name));
        if (candidate) continue;
        const reasons = channels.map((g) =>
          g.problem
            ? `channel ${g.name} is unusable (${g.problem})`
            : g.skippedBy.has(b.name)
              ? `${g.skippedBy.get(b.name)} skips it in channel ${g.name}`
              : `it is not on the upgrade chain of channel ${g.name}`,
        );
        out.push({ ...base, why: reasons.join('; ') });
        if (out.length >= 10) return out;
      }
    }
    return out;
  }

  /** The smallest set of constraints found that cannot hold together. */
  conflict(
    blame: Iterable<Blame>,
    failure: ObligationFailure,
    subs: ReadonlyMap<string, SubscriptionObligation>,
  ) {
    const out = new Map<string, ConflictingConstraint>();
    const add = (kind: ConflictingConstraint['kind'], text: string) =>
      out.set(`${kind} ${text}`, { kind, text });
    for (const b of [...blame].filter((x): x is string => typeof x === 'string').sort()) {
      const name = b.slice(b.indexOf(':') + 1);
      if (b.startsWith('sub:')) {
        const ob = subs.get(name);
        add(
          ConstraintKind.Subscription,
          ob
            ? `subscription ${name} wants package ${ob.sub.package} from channel ${ob.channel || '(default)'} of catalog ${ob.catalog.name}`
            : `subscription ${name}`,
        );
      } else add(ConstraintKind.Installed, `${name} is installed and no Subscription asks to change it`);
    }
    const walk = (f: ObligationFailure, depth: number) => {
      if (out.size > 25 || depth > 6) return;
      const ob = f.obligation;
      if (ob.kind === ObligationKind.Requirement)
        add(ConstraintKind.Requirement, `${ob.of.bundle} requires ${ob.wants}`);
      for (const v of f.candidates) {
        const r = v.ruledOut;
        if (r.kind === RuleOutKind.PackageConflict)
          add(ConstraintKind.OnePerPackage, `at most one bundle of package ${r.package}`);
        else if (r.kind === RuleOutKind.GVKConflict)
          add(ConstraintKind.OnePerGVK, `at most one provider of ${r.gvk}`);
        else if (r.kind === RuleOutKind.Unsatisfiable) {
          const o = r.failure.obligation;
          if (o.kind === ObligationKind.Requirement)
            add(ConstraintKind.Requirement, `${o.of.bundle} requires ${o.wants}`);
        } else if (r.kind === RuleOutKind.RequirementFailed || r.kind === RuleOutKind.LaterFailure)
          walk(r.failure, depth + 1);
      }
    };
    walk(failure, 0);
    return [...out.values()];
  }

  /** Candidates a decision passed over before its choice, and why. */
  passed(d: Decision): Passed[] {
    return d.passed.map((a) => {
      const v = this.verdict(a);
      return { candidate: v.candidate, why: ruleOutText(v) };
    });
  }
}

/** `group/version/kind` back to `group/version Kind`. */
function keyText(key: string): string {
  const [group = '', version = '', kind = ''] = key.split('/');
  return gvkText({ group, version, kind });
}
