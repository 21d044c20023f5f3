/**
 * The install instructions of a package page: the objects to `kubectl apply` (a Subscription, and
 * the Namespace, OperatorGroup and CatalogSource it needs where they are missing) and their YAML.
 * Pure, so the page and the tests compute the same text.
 *
 * Where to install, as OLM users know it from OperatorHub.io and the OpenShift console:
 * - an operator that suggests a namespace (`operatorframework.io/suggested-namespace`) goes there;
 * - one that supports AllNamespaces goes to the namespace holding the global OperatorGroup
 *   (`operators`, with `global-operators`, which `bosun start` makes as OLM's install does), so it
 *   needs no OperatorGroup of its own;
 * - any other goes to a namespace of its own, `my-<package>`, with an OperatorGroup for it.
 * A namespace without an OperatorGroup gets one: targeting the namespace itself when the operator
 * supports OwnNamespace (the least it can watch), else every namespace. Against a cluster the page
 * knows which namespaces and OperatorGroups exist and adds only what is missing; from a catalog
 * directory it cannot know, and adds the Namespace and OperatorGroup unless the namespace is the
 * global one.
 */
import type { InstallContext, OperatorGroupInfo } from './api.js';

export const InstallMode = {
  OwnNamespace: 'OwnNamespace',
  SingleNamespace: 'SingleNamespace',
  MultiNamespace: 'MultiNamespace',
  AllNamespaces: 'AllNamespaces',
} as const;

export const Approval = { Automatic: 'Automatic', Manual: 'Manual' } as const;
export type Approval = (typeof Approval)[keyof typeof Approval];

/** What of a package the instructions need. */
export interface Installable {
  name: string;
  defaultChannel: string;
  installModes: readonly string[];
  suggestedNamespace?: string;
  install: InstallContext;
}

export interface InstallChoice {
  namespace: string;
  channel: string;
  approval: Approval;
}

export interface InstallPlan {
  objects: Record<string, unknown>[];
  /** What the reader should know: why an object is there or not, or what will not work. */
  notes: string[];
  /** Why the install would fail as chosen (wrong namespace for the catalog, OperatorGroup trouble). */
  problem?: string;
}

/** The namespace the page proposes (see the module comment). */
export function defaultNamespace(p: Installable): string {
  if (p.install.onlyNamespace) return p.install.onlyNamespace;
  if (p.suggestedNamespace) return p.suggestedNamespace;
  const global = p.install.globalOperatorsNamespace;
  if (global && p.installModes.includes(InstallMode.AllNamespaces)) return global;
  return `my-${p.name}`;
}

/** Kubernetes namespace names: DNS labels. */
export function namespaceProblem(namespace: string): string | undefined {
  if (!namespace) return 'enter a namespace';
  if (namespace.length > 63) return 'a namespace name has at most 63 characters';
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace))
    return 'a namespace name is lower-case letters, digits and "-", starting and ending with a letter or digit';
  return undefined;
}

/** The install mode an OperatorGroup gives an operator installed in `namespace`. */
export function modeOf(group: OperatorGroupInfo, namespace: string): string {
  const targets = group.targetNamespaces;
  if (targets.length === 0) return InstallMode.AllNamespaces;
  if (targets.length > 1) return InstallMode.MultiNamespace;
  return targets[0] === namespace ? InstallMode.OwnNamespace : InstallMode.SingleNamespace;
}

export function installPlan(p: Installable, choice: InstallChoice): InstallPlan {
  const ns = choice.namespace;
  const notes: string[] = [];
  const objects: Record<string, unknown>[] = [];
  let problem: string | undefined;
  const cluster = p.install.cluster;
  const isGlobal = ns === p.install.globalOperatorsNamespace;
  const only = p.install.onlyNamespace;
  if (only && ns !== only) {
    problem = `the catalog ${p.install.source.namespace}/${p.install.source.name} is not in the global catalog namespace, so only Subscriptions in ${only} can use it`;
  }

  if (p.install.catalogSource) {
    const { name, namespace } = p.install.source;
    objects.push({
      apiVersion: 'operators.coreos.com/v1alpha1',
      kind: 'CatalogSource',
      metadata: { name, namespace },
      spec: {
        sourceType: 'http',
        address: p.install.catalogSource.address,
        displayName: p.install.catalogSource.displayName,
      },
    });
    notes.push(
      `The CatalogSource ${namespace}/${name} reads this catalog from ${p.install.catalogSource.address}; ` +
        `${namespace} is the global catalog namespace of \`bosun start\`, so every namespace can subscribe.`,
    );
  }

  const namespaceExists = cluster ? cluster.namespaces.includes(ns) : isGlobal;
  if (!namespaceExists) objects.push({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });

  const groups = cluster ? cluster.operatorGroups.filter((g) => g.namespace === ns) : [];
  if (groups.length > 1) {
    problem ??= `namespace ${ns} has ${groups.length} OperatorGroups (${groups.map((g) => g.name).join(', ')}); an operator installs only where there is exactly one`;
  } else if (groups.length === 1 || (!cluster && isGlobal)) {
    const group = groups[0];
    const mode = group ? modeOf(group, ns) : InstallMode.AllNamespaces;
    const name = group?.name ?? 'global-operators';
    if (!p.installModes.includes(mode)) {
      problem ??= `OperatorGroup ${ns}/${name} gives the ${mode} install mode, which ${p.name} does not support (it supports ${p.installModes.join(', ') || 'none'}); choose another namespace`;
    } else {
      notes.push(
        mode === InstallMode.AllNamespaces
          ? `Namespace ${ns} has the OperatorGroup ${name}, for every namespace: the operator watches them all.`
          : `Namespace ${ns} has the OperatorGroup ${name} (${mode}).`,
      );
    }
  } else {
    const own = p.installModes.includes(InstallMode.OwnNamespace);
    const all = p.installModes.includes(InstallMode.AllNamespaces);
    if (!own && !all) {
      problem ??= `${p.name} supports only ${p.installModes.join(', ') || 'no install mode'}: it must watch namespaces other than its own; create an OperatorGroup in ${ns} whose spec.targetNamespaces names them`;
    } else {
      objects.push({
        apiVersion: 'operators.coreos.com/v1',
        kind: 'OperatorGroup',
        metadata: { name: ns, namespace: ns },
        spec: own ? { targetNamespaces: [ns] } : {},
      });
      notes.push(
        own
          ? `The OperatorGroup makes the operator watch its own namespace, ${ns}.`
          : `The OperatorGroup makes the operator watch every namespace (it does not support watching only its own).`,
      );
    }
  }

  objects.push({
    apiVersion: 'operators.coreos.com/v1alpha1',
    kind: 'Subscription',
    metadata: { name: p.name, namespace: ns },
    spec: {
      channel: choice.channel,
      name: p.name,
      source: p.install.source.name,
      sourceNamespace: p.install.source.namespace,
      installPlanApproval: choice.approval,
    },
  });
  if (choice.approval === Approval.Manual) {
    notes.push(
      `With Manual approval each InstallPlan, the first one too, waits until you approve it: kubectl patch installplan <name> -n ${ns} --type merge -p '{"spec":{"approved":true}}'`,
    );
  }
  return { objects, notes, ...(problem ? { problem } : {}) };
}

// ---- YAML ----

/** A string YAML reads back as that same string without quotes. */
const plain = /^[A-Za-z_/][-A-Za-z0-9_./]*$/;
/** Plain-looking words YAML 1.1 readers take for booleans or null. */
const reserved = /^(y|n|yes|no|on|off|true|false|null|~)$/i;

function scalar(v: unknown): string {
  if (typeof v === 'string') return plain.test(v) && !reserved.test(v) ? v : JSON.stringify(v);
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (v === null || v === undefined) return 'null';
  throw new Error(`cannot write ${typeof v} as YAML`);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isEmpty = (v: unknown) =>
  Array.isArray(v) ? v.length === 0 : isObject(v) && Object.keys(v).length === 0;

function lines(v: unknown, indent: string): string[] {
  if (isObject(v)) {
    const out: string[] = [];
    for (const [k, child] of Object.entries(v)) {
      if (isEmpty(child)) out.push(`${indent}${k}: ${Array.isArray(child) ? '[]' : '{}'}`);
      else if (isObject(child)) out.push(`${indent}${k}:`, ...lines(child, `${indent}  `));
      else if (Array.isArray(child)) out.push(`${indent}${k}:`, ...lines(child, indent));
      else out.push(`${indent}${k}: ${scalar(child)}`);
    }
    return out;
  }
  if (Array.isArray(v)) {
    return v.flatMap((item) => {
      if (!isEmpty(item) && (isObject(item) || Array.isArray(item))) {
        const [first, ...rest] = lines(item, `${indent}  `);
        return [`${indent}- ${first!.trimStart()}`, ...rest];
      }
      return [`${indent}- ${isObject(item) ? '{}' : Array.isArray(item) ? '[]' : scalar(item)}`];
    });
  }
  return [`${indent}${scalar(v)}`];
}

/** The objects as one YAML stream, for `kubectl apply -f -`. */
export function toYaml(objects: readonly Record<string, unknown>[]): string {
  return objects.map((o) => lines(o, '').join('\n')).join('\n---\n') + '\n';
}
