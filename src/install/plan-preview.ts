/**
 * What carrying out an InstallPlan would change, object by object, for `bosun plan`. Pure: each
 * step's object as it is now (if it exists) and as a server-side dry run of the step says it would
 * be stored, in; create, change (with a unified diff of the two) or unchanged, out. What the API
 * server fills in or moves on every write (resourceVersion, managedFields, status, ...) is left
 * out of the comparison, so a step that would change nothing reads unchanged.
 */
import { createTwoFilesPatch } from 'diff';
import type { KubeObject } from '../apis/meta.js';
import { toYaml } from '../bundle/yaml.js';
import { isRecord } from '../util/record.js';

export const PreviewAction = {
  Create: 'create',
  Change: 'change',
  Unchanged: 'unchanged',
  Delete: 'delete',
} as const;
export type PreviewAction = (typeof PreviewAction)[keyof typeof PreviewAction];

export interface PreviewInput {
  kind: string;
  name: string;
  namespace?: string;
  live?: KubeObject;
  /** What the dry run returned, or why it could not be run. */
  after: { ok: true; object: KubeObject } | { ok: false; message: string };
}

export interface PreviewEntry {
  action: PreviewAction;
  kind: string;
  name: string;
  namespace?: string;
  /** For a change: a unified diff, current → after. */
  diff?: string;
  note?: string;
}

const VOLATILE_METADATA = ['managedFields', 'resourceVersion', 'generation', 'uid', 'creationTimestamp'];

/** An object as compared: without status and the bookkeeping the API server keeps. */
export function comparable(obj: KubeObject): Record<string, unknown> {
  const { status: _status, ...rest } = obj as KubeObject & { status?: unknown };
  const metadata = isRecord(rest.metadata) ? { ...rest.metadata } : {};
  for (const k of VOLATILE_METADATA) delete metadata[k];
  return { ...rest, metadata };
}

export function previewEntry(input: PreviewInput): PreviewEntry {
  const base = {
    kind: input.kind,
    name: input.name,
    ...(input.namespace ? { namespace: input.namespace } : {}),
  };
  if (!input.after.ok)
    return {
      ...base,
      action: input.live ? PreviewAction.Change : PreviewAction.Create,
      note: `not checked: ${input.after.message}`,
    };
  if (!input.live) return { ...base, action: PreviewAction.Create };
  const before = toYaml(comparable(input.live));
  const after = toYaml(comparable(input.after.object));
  if (before === after) return { ...base, action: PreviewAction.Unchanged };
  const label = `${input.kind} ${input.namespace ? `${input.namespace}/` : ''}${input.name}`;
  const diff = createTwoFilesPatch(`${label} (now)`, `${label} (after)`, before, after, '', '', {
    context: 3,
  });
  // The patch's first line ("====") says nothing the headers do not.
  return { ...base, action: PreviewAction.Change, diff: diff.split('\n').slice(1).join('\n') };
}
