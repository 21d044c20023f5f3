/**
 * A ClusterExtension's bundle configuration (`spec.config.inline`) checked as OLM v1 checks a
 * registry+v1 bundle's: operator-controller's rukpak/bundle/registryv1.go builds a JSON schema from
 * the CSV's install modes and config/config.go validates the inline object against it. Bosun
 * checks the same rules directly, without a schema engine:
 * - `watchNamespace` is the one key served. The install modes the bundle supports decide it:
 *   AllNamespaces only: not allowed (the operator watches every namespace); OwnNamespace only:
 *   required, and must be `spec.namespace`; SingleNamespace only: required, and must differ from
 *   it; OwnNamespace and SingleNamespace: required, any namespace; AllNamespaces and another:
 *   optional. `null` counts as unset, as in v1. The value is a namespace name (a DNS-1123 label of
 *   at most 63 characters).
 * - A bundle supporting none of AllNamespaces, OwnNamespace, SingleNamespace is refused, as v1
 *   refuses it.
 * - Any other key is an unknown field. v1's `deploymentConfig` (its feature-gated form of a
 *   Subscription's `spec.config`) is refused as not served yet: Bosun's engine reads that
 *   configuration from a CSV's Subscription, and an extension has none.
 * Every problem is reported in one pass, worded as v1 words it (`invalid ClusterExtension
 * configuration: invalid configuration: ...`) and then naming the field and what the bundle allows.
 *
 * A namespace with an OperatorGroup the extension did not make (`groupGiven`) keeps the targets
 * that group gives while `watchNamespace` is unset: v0's OperatorGroup stands for the setting
 * there (an operator migrated from a Subscription keeps its group), so the setting is not
 * required then. When the catalog does not say which install modes the bundle supports (no
 * `olm.csv.metadata`, no inline CSV) only the keys and the name are checked: the engine's
 * OperatorGroup check on the CSV refuses a mode the operator does not support.
 */
import { type BundleDoc, PropertyType } from '../apis/fbc.js';
import type { ClusterExtensionConfig } from '../apis/olmv1.js';
import { type InstallMode, InstallModeType } from '../apis/operators.js';
import { decode } from '../olm/property-value.js';

export const WatchNamespaceKey = 'watchNamespace';
/** v1's name for the deployment configuration it serves behind a feature gate. */
export const DeploymentConfigKey = 'deploymentConfig';
const field = (key: string) => `spec.config.inline.${key}`;

/** v1's pattern and limit for a namespace name (registryv1.go namespaceNamePattern, namespaceNameMaxLength). */
const NamespaceNamePattern = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
const NamespaceNameMaxLength = 63;

/** How much of a key or value a message quotes: the configuration is the user's, of any size. */
const QuoteMax = 64;
/** How many unknown keys a message names; the rest are counted. */
const UnknownKeysListed = 5;

export interface BundleConfigInput {
  config: ClusterExtensionConfig | undefined;
  /** The extension's `spec.namespace`, where the operator is installed. */
  namespace: string;
  /** The bundle's name, for messages. */
  bundle: string;
  /** The bundle's install modes, undefined when the catalog does not carry them. */
  installModes: readonly InstallMode[] | undefined;
  /** Whether the namespace has an OperatorGroup the extension did not make (see above). */
  groupGiven: boolean;
}

/** The configuration checked: the namespace the operator is to watch, when one is set. */
export interface BundleConfig {
  watchNamespace?: string;
}

export type BundleConfigResult = { ok: true; value: BundleConfig } | { ok: false; message: string };

export function checkBundleConfig(input: BundleConfigInput): BundleConfigResult {
  const inline = input.config?.inline ?? {};
  const problems: string[] = [];

  const unknown = Object.keys(inline)
    .filter((k) => k !== WatchNamespaceKey)
    .sort();
  for (const key of unknown.slice(0, UnknownKeysListed))
    problems.push(
      key === DeploymentConfigKey
        ? `unknown field "${DeploymentConfigKey}": ${field(DeploymentConfigKey)} is not served by Bosun yet (only ${field(WatchNamespaceKey)} is)`
        : `unknown field ${quote(key)}: spec.config.inline of a registry+v1 bundle takes only "${WatchNamespaceKey}"`,
    );
  if (unknown.length > UnknownKeysListed)
    problems.push(`${unknown.length - UnknownKeysListed} more unknown fields in spec.config.inline`);

  const raw = Object.hasOwn(inline, WatchNamespaceKey) ? inline[WatchNamespaceKey] : undefined;
  const watch = raw === null ? undefined : raw;
  const named = typeof watch === 'string' ? nameProblem(watch) : undefined;
  if (watch !== undefined && typeof watch !== 'string')
    problems.push(
      `invalid type for field "${WatchNamespaceKey}": got ${jsonType(watch)}, want string: ${field(WatchNamespaceKey)} is the name of the namespace the operator watches`,
    );
  else if (named !== undefined) problems.push(named);
  else problems.push(...modeProblems(input, watch));

  if (problems.length > 0) {
    const detail =
      problems.length === 1 ? problems[0] : `multiple errors found:\n  - ${problems.join('\n  - ')}`;
    return { ok: false, message: `invalid ClusterExtension configuration: invalid configuration: ${detail}` };
  }
  return { ok: true, value: typeof watch === 'string' ? { watchNamespace: watch } : {} };
}

/** Why `name` is not a namespace name, in v1's words first. */
function nameProblem(name: string): string | undefined {
  const f = field(WatchNamespaceKey);
  if (name.length === 0)
    return `field "${WatchNamespaceKey}" must have minimum length of 1 (len=0): ${f} is empty`;
  if (name.length > NamespaceNameMaxLength)
    return `field "${WatchNamespaceKey}" must have maximum length of ${NamespaceNameMaxLength} (len=${name.length}): ${f} ${quote(name)} is not a namespace name`;
  if (!new RegExp(NamespaceNamePattern).test(name))
    return `field "${WatchNamespaceKey}" must match pattern "${NamespaceNamePattern}": ${f} ${quote(name)} is not a namespace name (lowercase letters, digits and '-', starting and ending with a letter or digit)`;
  return undefined;
}

/** What the bundle's install modes say of `watch` (a valid name, or unset). */
function modeProblems(input: BundleConfigInput, watch: string | undefined): string[] {
  if (input.installModes === undefined) return [];
  const modes = supportedModes(input.installModes);
  const has = (t: InstallModeType) => modes.includes(t);
  const all = has(InstallModeType.AllNamespaces);
  const own = has(InstallModeType.OwnNamespace);
  const single = has(InstallModeType.SingleNamespace);
  const f = field(WatchNamespaceKey);
  const supports = `bundle ${input.bundle} supports ${modes.length > 0 ? modes.join(', ') : 'no install mode'}`;
  // The namespace's own OperatorGroup stands for an unset watchNamespace (see the top of the file).
  if (watch === undefined && input.groupGiven) return [];

  if (!all && !own && !single)
    return [
      `unsupported bundle: bundle must support at least one of [AllNamespaces SingleNamespace OwnNamespace] install modes: ${supports}`,
    ];
  if (!own && !single)
    return watch === undefined
      ? []
      : [
          `unknown field "${WatchNamespaceKey}": ${f} is not allowed, as ${supports} only (the operator watches every namespace)`,
        ];
  if (watch === undefined)
    return all
      ? []
      : [
          `required field "${WatchNamespaceKey}" is missing: ${f} must name the namespace the operator watches${own && !single ? ` (${quote(input.namespace)}, the install namespace)` : ''}, as ${supports} and not AllNamespaces`,
        ];
  if (own && !single && watch !== input.namespace)
    return [
      `invalid format for field "${WatchNamespaceKey}": invalid value ${quote(watch)}: must be ${quote(input.namespace)} (the namespace where the operator is installed) because this operator only supports OwnNamespace install mode: ${f}, as ${supports}`,
    ];
  if (single && !own && watch === input.namespace)
    return [
      `invalid format for field "${WatchNamespaceKey}": invalid value ${quote(watch)}: must be different from ${quote(input.namespace)} (the install namespace) because this operator uses SingleNamespace install mode to watch a different namespace: ${f}, as ${supports}`,
    ];
  return [];
}

/** The install modes supported, in v0's order of the types. */
function supportedModes(modes: readonly InstallMode[]): InstallModeType[] {
  return Object.values(InstallModeType).filter((t) =>
    modes.some((m) => m.type === t && m.supported === true),
  );
}

/**
 * The install modes a catalog's bundle declares: its `olm.csv.metadata` (what opm writes), else
 * the CSV among its `olm.bundle.object`s; undefined when it has neither or they do not parse.
 */
export function bundleInstallModes(bundle: Pick<BundleDoc, 'properties'>): InstallMode[] | undefined {
  for (const p of bundle.properties) {
    if (p.type !== PropertyType.CSVMetadata) continue;
    const modes = installModesOf((decode(p.value) as { installModes?: unknown } | undefined)?.installModes);
    if (modes) return modes;
  }
  for (const p of bundle.properties) {
    if (p.type !== PropertyType.BundleObject) continue;
    const data = (decode(p.value) as { data?: unknown } | undefined)?.data;
    if (typeof data !== 'string') continue;
    const text = Buffer.from(data, 'base64').toString('utf8');
    // Only the CSV is parsed: the other objects (CRDs above all) are most of the bytes.
    if (!text.includes('ClusterServiceVersion')) continue;
    try {
      const obj = JSON.parse(text) as { kind?: unknown; spec?: { installModes?: unknown } };
      if (obj.kind === 'ClusterServiceVersion') return installModesOf(obj.spec?.installModes);
    } catch {
      // opm writes bundle objects as JSON; anything else says nothing of the install modes.
    }
  }
  return undefined;
}

function installModesOf(v: unknown): InstallMode[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.filter(
    (m): m is InstallMode =>
      typeof m === 'object' && m !== null && typeof m.type === 'string' && typeof m.supported === 'boolean',
  );
}

/** A key or value of the user's, quoted (escapes shown, never raw) and cut to QuoteMax characters. */
function quote(s: string): string {
  return s.length > QuoteMax
    ? `${JSON.stringify(s.slice(0, QuoteMax))}... (${s.length} characters)`
    : JSON.stringify(s);
}

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'object') return 'object';
  return typeof v;
}
