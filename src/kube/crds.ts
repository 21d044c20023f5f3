/**
 * Installing CustomResourceDefinitions: apply them, then wait until the API server serves them
 * (the Established condition). Until then, creating a custom resource of the new kind fails.
 */
import type { KubeObject } from '../apis/meta.js';
import type { Applier } from './apply.js';
import type { KubeClient } from './client.js';
import { type Clock, sleep, systemClock } from './clock.js';
import { isNotFound } from './errors.js';
import { Builtin } from './resources.js';
import { isRecord } from '../util/record.js';

interface CrdCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

interface CrdStatus {
  status?: { conditions?: CrdCondition[] };
}

/**
 * The conditions of whatever the API server answered for a CRD (an apply's response), checked
 * rather than assumed: anything not shaped as a condition is left out.
 */
export function crdStatusOf(response: unknown): CrdStatus {
  const status = isRecord(response) ? response.status : undefined;
  const conditions = isRecord(status) && Array.isArray(status.conditions) ? status.conditions : [];
  return {
    status: {
      conditions: conditions.flatMap((c: unknown) =>
        isRecord(c) && typeof c.type === 'string' && typeof c.status === 'string'
          ? [
              {
                type: c.type,
                status: c.status,
                ...(typeof c.reason === 'string' ? { reason: c.reason } : {}),
                ...(typeof c.message === 'string' ? { message: c.message } : {}),
              },
            ]
          : [],
      ),
    },
  };
}

const crdResource = Builtin.CustomResourceDefinition;

/** Whether the API server has accepted the CRD's names and serves it. */
export function isEstablished(crd: CrdStatus): boolean {
  return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
}

/**
 * Reasons the API server gives for not establishing a CRD that waiting does not cure: the CRD
 * itself must change (its names clash with another CRD's, or its conversion webhook's caBundle
 * holds no certificate).
 */
const permanentReasons = new Set([
  'InvalidCABundle',
  'PluralConflict',
  'SingularConflict',
  'ShortNamesConflict',
  'KindConflict',
  'ListKindConflict',
]);

/** Whether a CRD is refused for good (see permanentReasons): its conditions say so. */
export function isRefusedForGood(crd: CrdStatus): boolean {
  return (
    crd.status?.conditions?.some(
      (c) => c.status === 'False' && c.reason !== undefined && permanentReasons.has(c.reason),
    ) ?? false
  );
}

/** Why a CRD is not served yet, from its conditions (e.g. a NamesAccepted conflict). */
export function notEstablishedReason(crd: CrdStatus): string {
  const bad = crd.status?.conditions?.filter((c) => c.status !== 'True') ?? [];
  if (bad.length === 0) return 'no Established condition yet';
  return bad
    .map((c) => `${c.type}=${c.status}${c.reason ? ` (${c.reason}: ${c.message ?? ''})` : ''}`)
    .join(', ');
}

export interface InstallCrdsOptions {
  clock?: Clock;
  /** Give up waiting for Established after this long. */
  timeoutMs?: number;
  pollMs?: number;
}

/** Applies `crds` and resolves once every one of them is Established. */
export async function installCrds(
  applier: Applier,
  client: KubeClient,
  crds: readonly KubeObject[],
  opts: InstallCrdsOptions = {},
): Promise<void> {
  const clock = opts.clock ?? systemClock;
  for (const crd of crds) await applier.apply(crd);
  const deadline = clock.now() + (opts.timeoutMs ?? 60_000);
  const pending = new Set(crds.map((c) => c.metadata?.name ?? ''));
  for (;;) {
    const reasons: string[] = [];
    for (const name of [...pending]) {
      try {
        const crd = await client.request<CrdStatus>({
          path: `/apis/${crdResource.group}/${crdResource.version}/${crdResource.plural}/${name}`,
        });
        if (isEstablished(crd)) pending.delete(name);
        else reasons.push(`${name}: ${notEstablishedReason(crd)}`);
      } catch (err) {
        if (!isNotFound(err)) throw err;
        reasons.push(`${name}: not found`);
      }
    }
    if (pending.size === 0) return;
    if (clock.now() >= deadline) throw new Error(`CRDs not Established in time: ${reasons.join('; ')}`);
    await sleep(clock, opts.pollMs ?? 200);
  }
}
