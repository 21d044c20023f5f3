/**
 * The search: depth-first over choices with backtracking, so that a choice that makes a later
 * requirement unsatisfiable is undone and the next candidate tried.
 *
 * Obligations are met in a fixed order: every Subscription (by name), then the requirements of
 * chosen bundles, first come first served. An obligation the plan already meets is not a choice
 * (minimal change: nothing is added that is not needed). Candidates are tried in preference
 * order, so the first plan found is the preferred one.
 *
 * Each failure carries the set of earlier choices it depends on (conflict-directed
 * backjumping): when a failure does not depend on the choice just made, trying that choice's
 * alternatives cannot help, and the search returns past it. That keeps the search fast and makes
 * the failure that finally reaches the top a small explanation: which Subscriptions and installed
 * operators are in conflict, through which requirements and invariants.
 */
import type { DeadCause, ResolveContext } from './context.js';
import type { Entry, Requirement } from './model.js';
import type { CatalogKey, SubscriptionInput } from './types.js';

/** What a failure depends on: a decision level, or a root constraint (`sub:<name>`, `installed:<name>`). */
export type Blame = number | string;

export const subscriptionBlame = (name: string): string => `sub:${name}`;
export const installedBlame = (name: string): string => `installed:${name}`;

export interface Selection {
  entry: Entry;
  level: Blame;
  /** In words, on whose behalf: `installed`, `for subscription etcd`, `for etcdoperator.v0.9.4`. */
  heldFor: string;
  subscription?: string;
}

export interface SubscriptionObligation {
  kind: 'subscription';
  sub: SubscriptionInput;
  channel: string;
  catalog: CatalogKey;
  installed: Entry | null;
  candidates: Entry[];
  /** Why there are no candidates, when there are none. */
  note?: string;
  origin: Blame;
}

export interface RequirementObligation {
  kind: 'requirement';
  requirement: Requirement;
  of: Entry;
  origin: Blame;
}

export type Obligation = SubscriptionObligation | RequirementObligation;

export type Why =
  | { kind: 'dead'; cause: DeadCause }
  | { kind: 'package'; holder: Selection }
  | { kind: 'gvk'; gvk: string; holder: Selection }
  | { kind: 'later'; failure: Failure };

export interface Attempt {
  entry: Entry;
  why: Why;
}

export interface Failure {
  obligation: Obligation;
  attempts: Attempt[];
}

export interface Decision {
  pos: number;
  obligation: Obligation;
  chosen: Entry;
  /** Candidates preferred over `chosen` that were ruled out. */
  passed: Attempt[];
}

export interface Solution {
  selections: ReadonlyMap<string, Selection>;
  /** Each obligation in the order it was met, with the selection that meets it. */
  met: { obligation: Obligation; by: Selection; decision: Decision | null }[];
}

export type SearchResult =
  | { ok: true; solution: Solution }
  | { ok: false; failure: Failure; blame: ReadonlySet<Blame> }
  | { ok: false; limit: true };

type Outcome = { ok: true } | { ok: false; failure: Failure; blame: Set<Blame> };

class SearchLimit extends Error {}

export function search(
  ctx: ResolveContext,
  fixed: readonly Entry[],
  subscriptions: readonly SubscriptionObligation[],
  maxSteps: number,
): SearchResult {
  const s = new Search(ctx, maxSteps);
  for (const e of fixed) s.fix(e);
  try {
    return s.solve(subscriptions);
  } catch (err) {
    if (err instanceof SearchLimit) return { ok: false, limit: true };
    throw err;
  }
}

class Search {
  private readonly selected = new Map<string, Selection>();
  private readonly gvkOwner = new Map<string, string>();
  private readonly queue: Obligation[] = [];
  private readonly metBy: Selection[] = [];
  private readonly decisionAt: (Decision | null)[] = [];
  private readonly decisions: Decision[] = [];
  /** Requirements of fixed installed operators, met after the Subscriptions. */
  private readonly pending: RequirementObligation[] = [];
  private steps = 0;

  constructor(
    private readonly ctx: ResolveContext,
    private readonly maxSteps: number,
  ) {}

  /** An installed operator no Subscription references: it stays as it is, and its requirements must hold. */
  fix(e: Entry): void {
    const level = installedBlame(e.bundle.name);
    this.claim({ entry: e, level, heldFor: 'installed' });
    this.pending.push(
      ...e.bundle.requirements.map((r) => ({
        kind: 'requirement' as const,
        requirement: r,
        of: e,
        origin: level,
      })),
    );
  }

  solve(subscriptions: readonly SubscriptionObligation[]): SearchResult {
    this.queue.push(...subscriptions, ...this.pending);
    const out = this.run(0);
    if (!out.ok) return out;
    const met = this.queue.map((obligation, pos) => ({
      obligation,
      by: this.metBy[pos]!,
      decision: this.decisionAt[pos] ?? null,
    }));
    return { ok: true, solution: { selections: new Map(this.selected), met } };
  }

  private run(from: number): Outcome {
    let pos = from;
    for (; pos < this.queue.length; pos++) {
      const by = this.alreadyMet(this.queue[pos]!);
      if (!by) break;
      this.metBy[pos] = by;
      this.decisionAt[pos] = null;
    }
    if (pos === this.queue.length) return { ok: true };

    const ob = this.queue[pos]!;
    const level = this.decisions.length;
    const attempts: Attempt[] = [];
    const blame = new Set<Blame>([ob.origin]);
    for (const c of this.candidates(ob)) {
      if (++this.steps > this.maxSteps) throw new SearchLimit();
      const dead = this.ctx.deadCause(c);
      if (dead) {
        attempts.push({ entry: c, why: { kind: 'dead', cause: dead } });
        continue;
      }
      const clash = this.clash(c);
      if (clash) {
        attempts.push({ entry: c, why: clash });
        blame.add(clash.holder.level);
        continue;
      }

      const sel: Selection =
        ob.kind === 'subscription'
          ? { entry: c, level, heldFor: `for subscription ${ob.sub.name}`, subscription: ob.sub.name }
          : { entry: c, level, heldFor: `for ${ob.of.bundle.name}` };
      const release = this.claim(sel);
      const decision: Decision = { pos, obligation: ob, chosen: c, passed: [...attempts] };
      this.decisions.push(decision);
      this.metBy[pos] = sel;
      this.decisionAt[pos] = decision;
      const queued = this.queue.length;
      for (const r of c.bundle.requirements)
        this.queue.push({ kind: 'requirement', requirement: r, of: c, origin: level });

      const out = this.run(pos + 1);
      if (out.ok) return out;

      this.queue.length = queued;
      this.decisions.pop();
      release();
      // The failure does not involve this choice: no other candidate here can fix it.
      if (!out.blame.has(level)) return out;
      out.blame.delete(level);
      for (const b of out.blame) blame.add(b);
      attempts.push({ entry: c, why: { kind: 'later', failure: out.failure } });
    }
    return { ok: false, failure: { obligation: ob, attempts }, blame };
  }

  private candidates(ob: Obligation): Entry[] {
    return ob.kind === 'subscription' ? ob.candidates : this.ctx.requirementCandidates(ob.requirement, ob.of);
  }

  /** The selection that already meets `ob`, if one does. */
  private alreadyMet(ob: Obligation): Selection | undefined {
    if (ob.kind === 'subscription') {
      const held = this.selected.get(ob.sub.package);
      return held && ob.candidates.some((c) => c.id === held.entry.id) ? held : undefined;
    }
    const req = ob.requirement;
    const meets = (held: Selection | undefined) =>
      held !== undefined && !held.entry.offChain && req.test(held.entry.bundle);
    const hint = req.hint;
    if (hint.kind === 'gvk') {
      const owner = this.gvkOwner.get(hint.key);
      const held = owner === undefined ? undefined : this.selected.get(owner);
      return meets(held) ? held : undefined;
    }
    if (hint.kind === 'package') {
      const held = this.selected.get(hint.name);
      return meets(held) ? held : undefined;
    }
    for (const held of this.selected.values()) if (meets(held)) return held;
    return undefined;
  }

  /** Why `c` cannot join the current plan: one bundle per package, one provider per API. */
  private clash(c: Entry): Extract<Why, { kind: 'package' | 'gvk' }> | undefined {
    const held = this.selected.get(c.bundle.package);
    if (held && held.entry.id !== c.id) return { kind: 'package', holder: held };
    for (const k of c.bundle.providesKeys) {
      const owner = this.gvkOwner.get(k);
      if (owner !== undefined && owner !== c.bundle.package)
        return { kind: 'gvk', gvk: k, holder: this.selected.get(owner)! };
    }
    return undefined;
  }

  /** Adds a selection to the plan; returns how to take it back. */
  private claim(sel: Selection): () => void {
    const pkg = sel.entry.bundle.package;
    this.selected.set(pkg, sel);
    const claimed = sel.entry.bundle.providesKeys.filter((k) => !this.gvkOwner.has(k));
    for (const k of claimed) this.gvkOwner.set(k, pkg);
    return () => {
      this.selected.delete(pkg);
      for (const k of claimed) this.gvkOwner.delete(k);
    };
  }
}
