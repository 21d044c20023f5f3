/**
 * The resolver's input and output: plain data, no Kubernetes objects. The manager builds a
 * `ResolutionInput` from the catalogs a namespace can see, the CSVs installed there and its
 * Subscriptions; `bosun resolve` builds the same thing from files.
 */
import type { DeclarativeConfig, Property } from '../apis/fbc.js';
import type { Problem } from '../util/result.js';

/** Where a bundle comes from: a CatalogSource, by namespace and name. */
export interface CatalogKey {
  name: string;
  namespace: string;
}

/** A catalog the namespace can use, with its content. Higher `priority` is preferred (OLM's `spec.priority`). */
export interface Catalog {
  name: string;
  namespace: string;
  priority: number;
  config: DeclarativeConfig;
}

/** A ClusterServiceVersion installed in the namespace. */
export interface InstalledOperator {
  /** The CSV name, which is also its bundle name. */
  name: string;
  package: string;
  version: string;
  /** The catalog it was installed from, when known; dependencies prefer that catalog. */
  catalog?: CatalogKey;
  /** Its bundle properties (`olm.gvk`, `olm.gvk.required`, ...), as the catalog listed them. */
  properties: Property[];
}

/** The parts of a Subscription the resolver reads (`spec` plus the object's name and namespace). */
export interface SubscriptionInput {
  name: string;
  namespace: string;
  package: string;
  /** Empty or missing: any channel of the package, the default channel first (as in OLM). */
  channel?: string;
  /** The CatalogSource name (`spec.source`). */
  source: string;
  /** The CatalogSource namespace (`spec.sourceNamespace`). */
  sourceNamespace: string;
  /** For a fresh install, install exactly this bundle instead of the best entry of the channel. */
  startingCSV?: string;
}

export interface ResolutionInput {
  /** The namespace being resolved; every Subscription must be in it. */
  namespace: string;
  catalogs: readonly Catalog[];
  installed: readonly InstalledOperator[];
  subscriptions: readonly SubscriptionInput[];
}

export interface ResolveOptions {
  /** Also explain a successful resolution: why each bundle, and not a newer one. */
  explain?: boolean;
  /** Upper bound on candidates tried before giving up; keeps a pathological catalog from hanging a reconcile. */
  maxSteps?: number;
}

export const StepReason = {
  /** A Subscription asked for this bundle. */
  Subscription: 'subscription',
  /** Another bundle in the plan requires it. */
  Dependency: 'dependency',
} as const;
export type StepReason = (typeof StepReason)[keyof typeof StepReason];

/** One bundle to install or upgrade to. */
export interface InstallStep {
  package: string;
  bundle: string;
  version: string;
  catalog: string;
  catalogNamespace: string;
  channel: string;
  /** The installed bundle this one upgrades, or null for a new install. */
  replaces: string | null;
  reason: StepReason;
  /** The Subscription that asked for it (reason `subscription`). */
  subscription?: string;
  /** The bundle image, as the catalog lists it. */
  image?: string;
}

export const SubscriptionState = {
  /** A fresh install. */
  Install: 'install',
  /** The installed bundle is upgraded. */
  Upgrade: 'upgrade',
  /** The installed bundle stays: nothing newer is reachable. */
  AtLatest: 'at-latest',
} as const;
export type SubscriptionState = (typeof SubscriptionState)[keyof typeof SubscriptionState];

export interface SubscriptionOutcome {
  subscription: string;
  package: string;
  channel: string;
  catalog: string;
  catalogNamespace: string;
  bundle: string;
  version: string;
  state: SubscriptionState;
  /**
   * Set when the installed bundle stays only because the Subscription's catalog, package or
   * channel cannot be found (e.g. `catalog olm/community ... is not one the namespace can use`).
   */
  note?: string;
}

export const FailureReason = {
  /** The constraints have no solution. */
  ConstraintsNotSatisfiable: 'ConstraintsNotSatisfiable',
  /** The input itself is wrong (e.g. two installed CSVs of one package). */
  InvalidInput: 'InvalidInput',
  /** The search tried `maxSteps` candidates without an answer. */
  SearchLimitExceeded: 'SearchLimitExceeded',
} as const;
export type FailureReason = (typeof FailureReason)[keyof typeof FailureReason];

export type ResolutionResult =
  | {
      ok: true;
      /** Bundles to install, dependencies before the bundles that need them. */
      steps: InstallStep[];
      subscriptions: SubscriptionOutcome[];
      explanation?: Explanation;
    }
  | {
      ok: false;
      reason: FailureReason;
      /** One or two sentences for a condition message. */
      message: string;
      explanation: Explanation;
      /** For `InvalidInput`: what is wrong, naming the object and field. */
      problems?: Problem[];
    };

// ---- explanations ----

/** A bundle as offered by one channel of one catalog, or as installed. */
export interface BundleRef {
  package: string;
  bundle: string;
  version: string;
  catalog: string;
  catalogNamespace: string;
  channel: string;
  installed?: boolean;
}

export const ObligationKind = {
  Subscription: 'subscription',
  Requirement: 'requirement',
} as const;
export type ObligationKind = (typeof ObligationKind)[keyof typeof ObligationKind];

/** Something the plan must satisfy: a Subscription, or one requirement of a bundle in the plan. */
export type ObligationRef =
  | {
      kind: typeof ObligationKind.Subscription;
      subscription: string;
      package: string;
      channel: string;
      catalog: string;
      catalogNamespace: string;
      installed: string | null;
    }
  | {
      kind: typeof ObligationKind.Requirement;
      of: BundleRef;
      /** The property type it comes from: olm.gvk.required, olm.package.required, olm.constraint, olm.label.required. */
      type: string;
      /** What it asks for, e.g. `a provider of etcd.database.coreos.com/v1beta2 EtcdBackup`. */
      wants: string;
      failureMessage?: string;
    };

export const RuleOutKind = {
  /** The bundle's own data is unusable (bad version, malformed property, broken channel). */
  InvalidBundle: 'InvalidBundle',
  /** One of its requirements has no usable provider anywhere, whatever else is chosen. */
  Unsatisfiable: 'Unsatisfiable',
  /** Its package is already in the plan as another bundle. */
  PackageConflict: 'PackageConflict',
  /** An API it provides is already provided by another package in the plan. */
  GVKConflict: 'GVKConflict',
  /** Choosing it left one of its own requirements unmet. */
  RequirementFailed: 'RequirementFailed',
  /** Choosing it left something else in the plan unmet. */
  LaterFailure: 'LaterFailure',
  /** The search gave up before deciding. */
  SearchLimit: 'SearchLimit',
} as const;
export type RuleOutKind = (typeof RuleOutKind)[keyof typeof RuleOutKind];

/** Why a candidate is in the plan's way, and on whose behalf. */
export interface Holder {
  bundle: BundleRef;
  /** e.g. `subscription etcd`, `installed`, `dependency of etcdoperator.v0.9.4`. */
  heldFor: string;
}

export type RuleOut =
  | { kind: typeof RuleOutKind.InvalidBundle; field: string; message: string }
  | { kind: typeof RuleOutKind.Unsatisfiable; failure: ObligationFailure }
  | { kind: typeof RuleOutKind.PackageConflict; package: string; with: Holder }
  | { kind: typeof RuleOutKind.GVKConflict; gvk: string; with: Holder }
  | { kind: typeof RuleOutKind.RequirementFailed; failure: ObligationFailure }
  | { kind: typeof RuleOutKind.LaterFailure; failure: ObligationFailure }
  | { kind: typeof RuleOutKind.SearchLimit };

export interface CandidateVerdict {
  candidate: BundleRef;
  ruledOut: RuleOut;
}

/** Bundles that would match but that the namespace cannot use, and why (skipped, not in a channel, same package). */
export interface Unusable {
  bundle: string;
  package: string;
  catalog: string;
  why: string;
}

/** An obligation no candidate could meet: each candidate and what ruled it out. */
export interface ObligationFailure {
  obligation: ObligationRef;
  candidates: CandidateVerdict[];
  /** How many catalogs were searched (for "none of 3 catalogs has one"). */
  catalogsSearched: number;
  /** Matching bundles that were not candidates at all. */
  unusable: Unusable[];
  /** Why there were no candidates, when that is the whole story (missing package, channel, ...). */
  note?: string;
  /** True when nested failures were cut to keep the explanation small. */
  truncated?: boolean;
}

export const ConstraintKind = {
  Subscription: 'subscription',
  Installed: 'installed',
  Requirement: 'requirement',
  OnePerPackage: 'one-bundle-per-package',
  OnePerGVK: 'one-provider-per-api',
} as const;
export type ConstraintKind = (typeof ConstraintKind)[keyof typeof ConstraintKind];

/** One member of the smallest conflicting set: together these cannot all hold. */
export interface ConflictingConstraint {
  kind: ConstraintKind;
  /** e.g. `subscription etcd`, `etcdoperator.v0.9.4 requires a provider of ...`, `package etcd`. */
  text: string;
}

/** Why a newer bundle than the chosen one was not taken (success explanations). */
export interface Passed {
  candidate: BundleRef;
  why: string;
}

export interface SubscriptionReport {
  subscription: string;
  package: string;
  channel: string;
  catalog: string;
  catalogNamespace: string;
  installed: string | null;
  /** The chosen bundle (success). */
  chosen?: BundleRef;
  /** Candidates preferred over the chosen one, and why each was passed over. */
  passedOver: Passed[];
  /** Whether this Subscription is part of the conflicting set (failure). */
  inConflict?: boolean;
}

export interface DependencyReport {
  requiredBy: BundleRef;
  wants: string;
  chosen: BundleRef;
  passedOver: Passed[];
}

export interface Explanation {
  subscriptions: SubscriptionReport[];
  /** Success: why each dependency bundle was chosen. */
  dependencies?: DependencyReport[];
  /** Failure: the obligation that could not be met, with every candidate and why it was ruled out. */
  failure?: ObligationFailure;
  /** Failure: the smallest set of constraints found that cannot hold together. */
  conflict?: ConflictingConstraint[];
}
