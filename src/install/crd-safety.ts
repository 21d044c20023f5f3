/**
 * Whether replacing a live CustomResourceDefinition with a bundle's new one is safe for what the
 * cluster stores. Pure: two CRDs in, one finding per problem out, each naming the CRD, the version
 * and the field path. OLM v0 checks two things (stored versions kept, existing objects valid);
 * OLM v1 checks schemas only; this checks both, schema change by schema change:
 *
 * - the scope changed; a version in `status.storedVersions` dropped; a served version removed;
 * - in every version both define: a field removed (unless its parent now preserves unknown
 *   fields), a field made required, a type changed, an enum added or values removed, a default
 *   added or changed, a maximum (`maximum`, `maxItems`, `maxLength`, `maxProperties`) added or
 *   lowered, a minimum added or raised, a pattern added or changed, `nullable` removed,
 *   `x-kubernetes-preserve-unknown-fields` removed.
 *
 * What only widens what is accepted passes: a new optional field, a new version, a relaxed bound,
 * a new enum value, a changed description. Schemas are walked through `properties`, `items` and
 * `additionalProperties`; a field path reads `.spec.ports[*].name`, a map value `.spec.labels{*}`.
 */
import { isDeepStrictEqual } from 'node:util';
import { isRecord } from '../util/record.js';

export const CRDCheck = {
  ScopeChanged: 'ScopeChanged',
  StoredVersionDropped: 'StoredVersionDropped',
  ServedVersionRemoved: 'ServedVersionRemoved',
  FieldRemoved: 'FieldRemoved',
  FieldMadeRequired: 'FieldMadeRequired',
  TypeChanged: 'TypeChanged',
  EnumRestricted: 'EnumRestricted',
  DefaultChanged: 'DefaultChanged',
  MaximumLowered: 'MaximumLowered',
  MinimumRaised: 'MinimumRaised',
  PatternChanged: 'PatternChanged',
  NullableRemoved: 'NullableRemoved',
  PreserveUnknownFieldsRemoved: 'PreserveUnknownFieldsRemoved',
} as const;
export type CRDCheck = (typeof CRDCheck)[keyof typeof CRDCheck];

export interface CRDFinding {
  crd: string;
  check: CRDCheck;
  version?: string;
  /** The field, from the top of the object: `.spec.size`. */
  path?: string;
  message: string;
}

/** The parts of a CRD the checks read. */
export interface CRDShape {
  metadata?: { name?: string };
  spec?: {
    scope?: string;
    versions?: { name: string; served?: boolean; schema?: { openAPIV3Schema?: unknown } }[];
  };
  status?: { storedVersions?: string[] };
}

type Schema = Record<string, unknown>;

const MAXIMA = ['maximum', 'maxItems', 'maxLength', 'maxProperties'] as const;
const MINIMA = ['minimum', 'minItems', 'minLength', 'minProperties'] as const;
const PRESERVE = 'x-kubernetes-preserve-unknown-fields';

/** Every problem with replacing `live` by `next`; none when it is safe. */
export function crdUpgradeFindings(live: CRDShape, next: CRDShape): CRDFinding[] {
  const crd = next.metadata?.name ?? live.metadata?.name ?? '';
  const out: CRDFinding[] = [];
  const add = (check: CRDCheck, message: string, version?: string, path?: string) =>
    out.push({
      crd,
      check,
      ...(version ? { version } : {}),
      ...(path !== undefined ? { path } : {}),
      message,
    });

  const oldScope = live.spec?.scope ?? 'Namespaced';
  const newScope = next.spec?.scope ?? 'Namespaced';
  if (oldScope !== newScope) add(CRDCheck.ScopeChanged, `the scope changes from ${oldScope} to ${newScope}`);

  const newVersions = new Map((next.spec?.versions ?? []).map((v) => [v.name, v]));
  const dropped = new Set<string>();
  for (const stored of live.status?.storedVersions ?? []) {
    if (newVersions.has(stored)) continue;
    dropped.add(stored);
    add(
      CRDCheck.StoredVersionDropped,
      `version ${stored} holds stored objects and the new CRD drops it`,
      stored,
    );
  }
  for (const v of live.spec?.versions ?? []) {
    const now = newVersions.get(v.name);
    if (v.served !== false && !dropped.has(v.name) && (!now || now.served === false))
      add(
        CRDCheck.ServedVersionRemoved,
        `served version ${v.name} is ${now ? 'no longer served' : 'removed'}`,
        v.name,
      );
    const before = v.schema?.openAPIV3Schema;
    const after = now?.schema?.openAPIV3Schema;
    if (isRecord(before) && isRecord(after))
      compareSchemas(before, after, '', (check, message, path) => add(check, message, v.name, path));
  }
  return out;
}

type Add = (check: CRDCheck, message: string, path: string) => void;

function compareSchemas(before: Schema, after: Schema, path: string, add: Add): void {
  const at = path || '.';
  if (after.type !== undefined && before.type !== after.type)
    add(
      CRDCheck.TypeChanged,
      `${at}: the type changes from ${String(before.type ?? 'any')} to ${String(after.type)}`,
      path,
    );

  if (Array.isArray(after.enum)) {
    if (!Array.isArray(before.enum)) add(CRDCheck.EnumRestricted, `${at}: an enum is added`, path);
    else {
      const removed = before.enum.filter(
        (v) => !(after.enum as unknown[]).some((w) => isDeepStrictEqual(v, w)),
      );
      if (removed.length)
        add(
          CRDCheck.EnumRestricted,
          `${at}: enum values are removed: ${removed.map((v) => JSON.stringify(v)).join(', ')}`,
          path,
        );
    }
  }
  if (after.default !== undefined && !isDeepStrictEqual(before.default, after.default))
    add(
      CRDCheck.DefaultChanged,
      before.default === undefined
        ? `${at}: a default is added (${JSON.stringify(after.default)})`
        : `${at}: the default changes from ${JSON.stringify(before.default)} to ${JSON.stringify(after.default)}`,
      path,
    );
  for (const k of MAXIMA) bound(k, before[k], after[k], (a, b) => b < a, CRDCheck.MaximumLowered, 'lowered');
  for (const k of MINIMA) bound(k, before[k], after[k], (a, b) => b > a, CRDCheck.MinimumRaised, 'raised');
  if (typeof after.pattern === 'string' && before.pattern !== after.pattern)
    add(
      CRDCheck.PatternChanged,
      before.pattern === undefined
        ? `${at}: a pattern is added (${after.pattern})`
        : `${at}: the pattern changes to ${after.pattern}`,
      path,
    );
  if (before.nullable === true && after.nullable !== true)
    add(CRDCheck.NullableRemoved, `${at}: null is no longer allowed (nullable removed)`, path);
  if (before[PRESERVE] === true && after[PRESERVE] !== true)
    add(
      CRDCheck.PreserveUnknownFieldsRemoved,
      `${at}: unknown fields are no longer preserved (${PRESERVE} removed)`,
      path,
    );

  const oldRequired = new Set(Array.isArray(before.required) ? before.required : []);
  for (const name of Array.isArray(after.required) ? after.required : [])
    if (!oldRequired.has(name))
      add(
        CRDCheck.FieldMadeRequired,
        `${path}.${String(name)}: the field is now required`,
        `${path}.${String(name)}`,
      );

  const oldProps = isRecord(before.properties) ? before.properties : {};
  const newProps = isRecord(after.properties) ? after.properties : {};
  for (const [name, schema] of Object.entries(oldProps)) {
    const child = `${path}.${name}`;
    const now = newProps[name];
    if (now === undefined) {
      if (after[PRESERVE] !== true) add(CRDCheck.FieldRemoved, `${child}: the field is removed`, child);
    } else if (isRecord(schema) && isRecord(now)) compareSchemas(schema, now, child, add);
  }
  if (isRecord(before.items) && isRecord(after.items))
    compareSchemas(before.items, after.items, `${path}[*]`, add);
  if (isRecord(before.additionalProperties) && isRecord(after.additionalProperties))
    compareSchemas(before.additionalProperties, after.additionalProperties, `${path}{*}`, add);

  function bound(
    keyword: string,
    was: unknown,
    now: unknown,
    tighter: (was: number, now: number) => boolean,
    check: CRDCheck,
    verb: string,
  ): void {
    if (typeof now !== 'number') return;
    if (typeof was !== 'number') add(check, `${at}: ${keyword} ${now} is added`, path);
    else if (tighter(was, now)) add(check, `${at}: ${keyword} is ${verb} from ${was} to ${now}`, path);
  }
}
