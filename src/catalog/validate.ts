/**
 * Catalog validation with the rules `opm validate` applies (operator-registry's declcfg → model
 * conversion and model validation), collecting every problem instead of stopping at the first:
 *
 * - packages: a DNS-1123 name, unique; a default channel that is one of its channels; at least
 *   one channel;
 * - channels: of a known package, unique per package, at least one entry, unique entry names,
 *   every entry has a bundle; exactly one head, no replaces cycle, no stranded entry (graph.ts);
 *   skipRange parses;
 * - bundles: of a known package, unique names, exactly one `olm.package` property naming the
 *   bundle's package, a semver version, versions unique per package, in at least one channel,
 *   an image or inline objects, well-formed values for the property types OLM interprets;
 * - deprecations: one document per package, references to the package or to its channels and
 *   bundles, each with a message, none twice.
 *
 * Pure: a DeclarativeConfig in, problems out. Files come from load.ts's origins when known.
 */
import {
  type BundleDoc,
  type ChannelDoc,
  type ChannelEntry,
  type DeclarativeConfig,
  type PackageDoc,
  type PackageProperty,
  type PackageRequiredProperty,
  PropertyType,
  Schema,
} from '../apis/fbc.js';
import { isGoBase64 } from '../bundle/manifest.js';
import { dns1123LabelError } from '../bundle/names.js';
import { isObject } from '../bundle/yaml.js';
import type { Problem } from '../util/result.js';
import { fileOf } from './origin.js';
import { channelGraph, channelGraphProblems } from '../olm/channel-graph.js';
import { constraintProblems } from '../olm/constraint.js';
import { parseRange, parseVersion, versionCore } from '../olm/version.js';
import { imageReferenceError } from '../olm/image-reference.js';

export interface CatalogValidation {
  errors: Problem[];
  warnings: Problem[];
}

/** How problems name catalog objects. */
export const objectName = {
  package: (pkg: string) => `package ${pkg}`,
  channel: (pkg: string, ch: string) => `channel ${pkg}/${ch}`,
  bundle: (name: string) => `bundle ${name}`,
  deprecations: (pkg: string) => `deprecations ${pkg}`,
};

type Say = (field: string | undefined, message: string) => void;

export function validateCatalog(cfg: DeclarativeConfig): CatalogValidation {
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  const at = (doc: object, object: string) => {
    const file = fileOf(doc);
    const mk =
      (into: Problem[]): Say =>
      (field, message) =>
        into.push({ ...(file ? { file } : {}), object, ...(field ? { field } : {}), message });
    return { error: mk(errors), warn: mk(warnings) };
  };

  const packages = new Map<string, PackageDoc>();
  for (const p of cfg.packages) {
    const name = typeof p.name === 'string' ? p.name : '';
    const { error } = at(p, objectName.package(name || '<unnamed>'));
    if (!name) {
      error('name', 'every olm.package needs a name');
      continue;
    }
    const bad = dns1123LabelError(name);
    if (bad) error('name', bad);
    if (packages.has(name)) {
      const first = fileOf(packages.get(name)!);
      error('name', `package ${name} is declared twice${first ? ` (first in ${first})` : ''}`);
      continue;
    }
    packages.set(name, p);
    if (p.icon !== undefined && !isGoBase64(p.icon.base64data)) {
      error('icon.base64data', 'is not valid base64, so opm cannot load the catalog');
    }
  }

  // Channels, per package.
  const channelsByPkg = new Map<string, Map<string, ChannelDoc>>();
  for (const c of cfg.channels) {
    const pkg = typeof c.package === 'string' ? c.package : '';
    const name = typeof c.name === 'string' ? c.name : '';
    const { error } = at(c, objectName.channel(pkg || '<no package>', name || '<unnamed>'));
    if (!pkg) error('package', 'every olm.channel names its package');
    else if (!packages.has(pkg)) error('package', `package ${pkg} has no olm.package document`);
    if (!name) error('name', 'every olm.channel needs a name');
    if (!pkg || !name) continue;
    const chans = channelsByPkg.get(pkg) ?? new Map<string, ChannelDoc>();
    channelsByPkg.set(pkg, chans);
    if (chans.has(name)) {
      error('name', `channel ${name} is declared twice in package ${pkg}`);
      continue;
    }
    chans.set(name, c);
  }

  // Bundles, per package.
  const bundlesByPkg = new Map<string, Map<string, BundleDoc>>();
  const versionsByPkg = new Map<string, Map<string, string>>();
  for (const b of cfg.bundles) {
    const pkg = typeof b.package === 'string' ? b.package : '';
    const name = typeof b.name === 'string' ? b.name : '';
    const { error } = at(b, objectName.bundle(name || '<unnamed>'));
    if (!name) error('name', 'every olm.bundle needs a name');
    if (!pkg) error('package', 'every olm.bundle names its package');
    else if (!packages.has(pkg)) error('package', `package ${pkg} has no olm.package document`);
    if (!name || !pkg) continue;
    const bundles = bundlesByPkg.get(pkg) ?? new Map<string, BundleDoc>();
    bundlesByPkg.set(pkg, bundles);
    if (bundles.has(name)) {
      error('name', `bundle ${name} is declared twice in package ${pkg}`);
      continue;
    }
    bundles.set(name, b);
    const version = checkBundleProperties(b, pkg, error);
    if (version !== undefined) {
      const versions = versionsByPkg.get(pkg) ?? new Map<string, string>();
      versionsByPkg.set(pkg, versions);
      const other = versions.get(version);
      if (other)
        error(
          'properties',
          `bundles ${other} and ${name} of package ${pkg} have the same version ${version}`,
        );
      else versions.set(version, name);
    }
    if (b.image === '' && !hasProperty(b, PropertyType.BundleObject)) {
      error('image', 'a bundle needs an image or its manifests as olm.bundle.object properties');
    }
    checkImageReferences(b, error);
  }

  // Channel contents and graphs.
  const inSomeChannel = new Map<string, Set<string>>();
  for (const [pkg, chans] of channelsByPkg) {
    const bundles = bundlesByPkg.get(pkg) ?? new Map<string, BundleDoc>();
    const member = inSomeChannel.get(pkg) ?? new Set<string>();
    inSomeChannel.set(pkg, member);
    for (const [name, c] of chans) {
      const { error } = at(c, objectName.channel(pkg, name));
      if (c.entries.length === 0) error('entries', 'a channel needs at least one entry');
      const seen = new Set<string>();
      const wellFormed = c.entries.filter((e, i) => checkEntry(e, i, seen, bundles, pkg, error));
      for (const e of wellFormed) member.add(e.name);
      if (wellFormed.length !== c.entries.length || wellFormed.length === 0) continue;
      for (const problem of channelGraphProblems(channelGraph(wellFormed))) error('entries', problem);
    }
  }

  // Package-level facts that need channels and bundles.
  for (const [name, p] of packages) {
    const { error } = at(p, objectName.package(name));
    const chans = channelsByPkg.get(name);
    if (!chans || chans.size === 0) error(undefined, 'the package has no channels');
    if (!p.defaultChannel) {
      if (chans && chans.size > 0)
        error('defaultChannel', `is required: one of ${[...chans.keys()].join(', ')}`);
    } else if (chans && chans.size > 0 && !chans.has(p.defaultChannel)) {
      error(
        'defaultChannel',
        `"${p.defaultChannel}" is not a channel of package ${name} (it has ${[...chans.keys()].join(', ')})`,
      );
    }
    const member = inSomeChannel.get(name) ?? new Set<string>();
    for (const [bname, b] of bundlesByPkg.get(name) ?? []) {
      if (!member.has(bname))
        at(b, objectName.bundle(bname)).error(
          undefined,
          `bundle ${bname} is in no channel of package ${name}`,
        );
    }
  }

  checkDeprecations(cfg, packages, channelsByPkg, bundlesByPkg, at);
  return { errors, warnings };
}

/** Checks one channel entry; true when it is usable for the graph checks. */
function checkEntry(
  e: ChannelEntry,
  i: number,
  seen: Set<string>,
  bundles: Map<string, BundleDoc>,
  pkg: string,
  error: Say,
): boolean {
  const at = `entries[${i}]`;
  if (e.name === '') {
    error(`${at}.name`, 'every entry needs a bundle name');
    return false;
  }
  let good = true;
  if (seen.has(e.name)) {
    error(`${at}.name`, `${e.name} is listed twice in this channel`);
    good = false;
  }
  seen.add(e.name);
  if (!bundles.has(e.name)) error(`${at}.name`, `no olm.bundle named ${e.name} in package ${pkg}`);
  e.skips?.forEach((s, j) => {
    if (s === '') {
      error(`${at}.skips[${j}]`, 'must be a bundle name');
      good = false;
    }
  });
  if (e.skipRange !== undefined) {
    const r = parseRange(e.skipRange);
    if (!r.ok) error(`${at}.skipRange`, r.message);
  }
  return good;
}

/** Checks a bundle's properties; returns its version when it has exactly one usable olm.package. */
function checkBundleProperties(b: BundleDoc, pkg: string, error: Say): string | undefined {
  const packageProps: { i: number; value: unknown }[] = [];
  b.properties.forEach((p, i) => {
    const at = `properties[${i}]`;
    if (p.type === '') {
      error(`${at}.type`, 'every property needs a type');
      return;
    }
    if (!('value' in p) || p.value === undefined || p.value === null) {
      error(`${at}.value`, 'every property needs a value');
      return;
    }
    const v = p.value;
    switch (p.type) {
      case PropertyType.Package:
        packageProps.push({ i, value: v });
        break;
      case PropertyType.PackageRequired: {
        // Its shape is the load schema's (schema.ts); its range is OLM's rule.
        const r = parseRange((v as PackageRequiredProperty).versionRange);
        if (!r.ok) error(`${at}.value.versionRange`, r.message);
        break;
      }
      case PropertyType.BundleObject:
        // Text, inline or left in its catalog file (payloads.ts): the load schema refuses any other `data`.
        if (!isObject(v) || (typeof v.data !== 'string' && typeof v.ref !== 'string')) {
          error(`${at}.value`, 'an olm.bundle.object value needs data (base64) or ref');
        }
        break;
      case PropertyType.Constraint:
        for (const bad of constraintProblems(v)) error(`${at}.value${bad.path}`, bad.message);
        break;
    }
  });
  if (packageProps.length !== 1) {
    error(
      'properties',
      `a bundle has exactly one ${PropertyType.Package} property, found ${packageProps.length}`,
    );
    return undefined;
  }
  const { i } = packageProps[0]!;
  const value = packageProps[0]!.value as PackageProperty;
  if (value.packageName !== pkg) {
    error(
      `properties[${i}].value.packageName`,
      `"${String(value.packageName)}" does not match the bundle's package ${pkg}`,
    );
  }
  if (!parseVersion(value.version)) {
    error(`properties[${i}].value.version`, `"${String(value.version)}" is not a semver version`);
    return undefined;
  }
  return versionCore(parseVersion(value.version)!);
}

export function hasProperty(b: BundleDoc, type: string): boolean {
  return Array.isArray(b.properties) && b.properties.some((p) => isObject(p) && p.type === type);
}

function checkDeprecations(
  cfg: DeclarativeConfig,
  packages: Map<string, PackageDoc>,
  channels: Map<string, Map<string, ChannelDoc>>,
  bundles: Map<string, Map<string, BundleDoc>>,
  at: (doc: object, object: string) => { error: Say; warn: Say },
): void {
  const seenPkg = new Set<string>();
  for (const d of cfg.deprecations) {
    const pkg = typeof d.package === 'string' ? d.package : '';
    const { error } = at(d, objectName.deprecations(pkg || '<no package>'));
    if (!pkg) {
      error('package', 'olm.deprecations names the package it deprecates in');
      continue;
    }
    if (!packages.has(pkg)) error('package', `package ${pkg} has no olm.package document`);
    if (seenPkg.has(pkg)) error('package', `package ${pkg} has more than one olm.deprecations document`);
    seenPkg.add(pkg);
    const refs = new Set<string>();
    d.entries.forEach((e, i) => {
      const f = `entries[${i}]`;
      const ref = e.reference;
      if (e.message === '') error(`${f}.message`, 'is required: tell users what to do instead');
      const name = ref.name || undefined;
      switch (ref.schema) {
        case Schema.Package:
          if (name)
            error(
              `${f}.reference.name`,
              'a package reference has no name: it deprecates the package it is in',
            );
          break;
        case Schema.Channel:
          if (!name) error(`${f}.reference.name`, 'is required for a channel reference');
          else if (!channels.get(pkg)?.has(name))
            error(`${f}.reference.name`, `${name} is not a channel of package ${pkg}`);
          break;
        case Schema.Bundle:
          if (!name) error(`${f}.reference.name`, 'is required for a bundle reference');
          else if (!bundles.get(pkg)?.has(name))
            error(`${f}.reference.name`, `${name} is not a bundle of package ${pkg}`);
          break;
      }
      const key = `${String(ref.schema)}/${name ?? ''}`;
      if (refs.has(key)) error(`${f}.reference`, `${key} is deprecated twice`);
      refs.add(key);
    });
  }
}

/** The bundle image and related images, each a reference opm's loader can parse (empty is not checked). */
function checkImageReferences(b: BundleDoc, error: (field: string, message: string) => void): void {
  const check = (field: string, ref: unknown) => {
    if (typeof ref !== 'string' || ref === '') return;
    const why = imageReferenceError(ref);
    if (why) error(field, `"${ref}" is not a valid image reference: ${why}`);
  };
  check('image', b.image);
  const related: unknown = b.relatedImages;
  if (Array.isArray(related))
    related.forEach((r, i) => check(`relatedImages[${i}].image`, isObject(r) ? r.image : undefined));
}
