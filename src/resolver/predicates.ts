/**
 * Candidate selection is composed of small predicates over plain data, combined with and/or/not
 * (the shape of operator-controller's catalogmetadata/filter). Each predicate is a function; the
 * requirement it came from carries the words that explain it.
 */
import { compareVersions, inRange, type Range, type Version } from '../olm/version.js';
import type { BundleInfo, Entry, GVK } from './model.js';

export type Predicate<T> = (x: T) => boolean;

export const and =
  <T>(...ps: Predicate<T>[]): Predicate<T> =>
  (x) =>
    ps.every((p) => p(x));

export const or =
  <T>(...ps: Predicate<T>[]): Predicate<T> =>
  (x) =>
    ps.some((p) => p(x));

/** True when none of `ps` holds (OLM's `not` compound constraint negates the disjunction). */
export const not =
  <T>(...ps: Predicate<T>[]): Predicate<T> =>
  (x) =>
    !ps.some((p) => p(x));

export const always: Predicate<unknown> = () => true;

// ---- over bundles (what requirements test) ----

export const inPackage =
  (name: string): Predicate<BundleInfo> =>
  (b) =>
    b.package === name;

export const inSemverRange =
  (range: Range): Predicate<BundleInfo> =>
  (b) =>
    b.version !== null && inRange(b.version, range);

export const providesGVK =
  (gvk: GVK): Predicate<BundleInfo> =>
  (b) =>
    b.provides.some((p) => p.group === gvk.group && p.version === gvk.version && p.kind === gvk.kind);

export const hasLabel =
  (label: string): Predicate<BundleInfo> =>
  (b) =>
    b.labels.includes(label);

// ---- over channel entries (what subscriptions select) ----

export const inChannel =
  (channel: string): Predicate<Entry> =>
  (e) =>
    e.channel === channel;

export const bundleNamed =
  (name: string): Predicate<Entry> =>
  (e) =>
    e.bundle.name === name;

/**
 * An entry that upgrades `installed`: it replaces it, skips it, or its skipRange contains the
 * installed version (OLM's replaces/skips/skipRange edges).
 */
export const successorOf =
  (installed: { name: string; version: Version | null }): Predicate<Entry> =>
  (e) =>
    e.replaces === installed.name ||
    e.skips.includes(installed.name) ||
    (e.skipRange !== null && installed.version !== null && inRange(installed.version, e.skipRange));

/** Strictly newer than `version`: staying put is a separate choice, and a downgrade is never one. */
export const newerThan =
  (version: Version | null): Predicate<Entry> =>
  (e) =>
    version === null || (e.bundle.version !== null && compareVersions(e.bundle.version, version) > 0);

export const onBundle =
  (p: Predicate<BundleInfo>): Predicate<Entry> =>
  (e) =>
    p(e.bundle);
