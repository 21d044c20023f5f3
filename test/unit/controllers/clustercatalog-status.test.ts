/**
 * A ClusterCatalog's status for each outcome of a reconcile, as operator-controller v1.2.0's
 * catalogd writes it: the conditions' types, statuses, reasons and messages, observedGeneration,
 * resolvedSource, urls and lastUnpacked; a failure keeps what is served; conditions of other
 * types go; lastTransitionTime moves only with the status.
 */
import { existsSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Condition } from '../../../src/apis/meta.js';
import {
  type ClusterCatalog,
  ClusterCatalogConditionReason,
  ClusterCatalogConditionType,
} from '../../../src/apis/olmv1.js';
import {
  clusterCatalogRequeue,
  clusterCatalogStatus,
  FailureRetryMs,
  type ServingState,
} from '../../../src/controllers/clustercatalog-status.js';

const t0 = Date.UTC(2026, 10, 26, 12, 0, 0);
const t1 = t0 + 60_000;
const serving: ServingState = {
  image: 'registry.example/catalogs/ops@sha256:' + 'a'.repeat(64),
  lastModified: t0 + 500,
  baseUrl: 'http://bosun.olm.svc:8080/catalogs/ops',
};

function catalog(status?: ClusterCatalog['status'], generation = 3): ClusterCatalog {
  return {
    apiVersion: 'olm.operatorframework.io/v1',
    kind: 'ClusterCatalog',
    metadata: { name: 'ops', generation },
    spec: { source: { type: 'Image', image: { ref: 'registry.example/catalogs/ops:latest' } } },
    ...(status ? { status } : {}),
  };
}

const cond = (c: Partial<Condition> & Pick<Condition, 'type' | 'status' | 'reason'>): Condition => ({
  message: '',
  lastTransitionTime: '2026-11-26T11:00:00Z',
  observedGeneration: 3,
  ...c,
});

const servingFields = {
  resolvedSource: { type: 'Image' as const, image: { ref: serving.image } },
  urls: { base: serving.baseUrl },
  lastUnpacked: '2026-11-26T12:00:00Z',
};

describe('clusterCatalogStatus', () => {
  it('serving content: Progressing True Succeeded and Serving True Available, in that order, with the digest, the base URL and lastUnpacked in whole seconds', () => {
    expect(clusterCatalogStatus(catalog(), { kind: 'serving', serving }, t1)).toEqual({
      conditions: [
        {
          type: 'Progressing',
          status: 'True',
          reason: 'Succeeded',
          message: 'Successfully unpacked and stored content from resolved source',
          observedGeneration: 3,
          lastTransitionTime: '2026-11-26T12:01:00Z',
        },
        {
          type: 'Serving',
          status: 'True',
          reason: 'Available',
          message: 'Serving desired content from resolved source',
          observedGeneration: 3,
          lastTransitionTime: '2026-11-26T12:01:00Z',
        },
      ],
      ...servingFields,
    });
  });

  it('a failed pull with content served: Progressing True Retrying with the cause, and the content served stays in the status, its Serving condition untouched', () => {
    // A new spec (generation 4) whose image fails: Serving still tells of generation 3's content.
    const served = cond({
      type: 'Serving',
      status: 'True',
      reason: 'Available',
      message: 'Serving desired content from resolved source',
    });
    const before = catalog(
      {
        conditions: [cond({ type: 'Progressing', status: 'True', reason: 'Succeeded' }), served],
        ...servingFields,
      },
      4,
    );
    const status = clusterCatalogStatus(
      before,
      { kind: 'failed', terminal: false, message: 'source catalog content: image x: unauthorized', serving },
      t1,
    );
    expect(status.conditions).toEqual([
      cond({
        type: 'Progressing',
        status: 'True',
        reason: 'Retrying',
        message: 'source catalog content: image x: unauthorized',
        observedGeneration: 4,
      }),
      served,
    ]);
    expect(status).toMatchObject(servingFields);
  });

  it('a first pull that fails: only Progressing, and nothing that points at content', () => {
    const status = clusterCatalogStatus(catalog(), { kind: 'failed', terminal: false, message: 'm' }, t1);
    expect(status).toEqual({
      conditions: [
        {
          type: 'Progressing',
          status: 'True',
          reason: 'Retrying',
          message: 'm',
          observedGeneration: 3,
          lastTransitionTime: '2026-11-26T12:01:00Z',
        },
      ],
    });
  });

  it('a failure with nothing served where Serving was True: Serving False Unavailable, and the fields that pointed at content go', () => {
    const before = catalog({
      conditions: [
        cond({ type: 'Progressing', status: 'True', reason: 'Succeeded' }),
        cond({ type: 'Serving', status: 'True', reason: 'Available' }),
      ],
      ...servingFields,
    });
    const status = clusterCatalogStatus(before, { kind: 'failed', terminal: false, message: 'm' }, t1);
    expect(status).toEqual({
      conditions: [
        cond({ type: 'Progressing', status: 'True', reason: 'Retrying', message: 'm' }),
        cond({
          type: 'Serving',
          status: 'False',
          reason: 'Unavailable',
          message: '',
          lastTransitionTime: '2026-11-26T12:01:00Z',
        }),
      ],
    });
  });

  it('a failure retrying cannot mend: Progressing False Blocked', () => {
    const status = clusterCatalogStatus(
      catalog(),
      { kind: 'failed', terminal: true, message: 'bad ref' },
      t1,
    );
    expect(status.conditions).toEqual([
      expect.objectContaining({
        type: 'Progressing',
        status: 'False',
        reason: 'Blocked',
        message: 'bad ref',
      }),
    ]);
  });

  it('availabilityMode Unavailable: Progressing True Succeeded and Serving False UserSpecifiedUnavailable, both saying why, and no content fields', () => {
    const before = catalog({
      conditions: [cond({ type: 'Serving', status: 'True', reason: 'Available' })],
      ...servingFields,
    });
    expect(clusterCatalogStatus(before, { kind: 'unavailable' }, t1)).toEqual({
      conditions: [
        cond({
          type: 'Progressing',
          status: 'True',
          reason: 'Succeeded',
          message: 'Catalog availability mode is set to Unavailable',
          lastTransitionTime: '2026-11-26T12:01:00Z',
        }),
        cond({
          type: 'Serving',
          status: 'False',
          reason: 'UserSpecifiedUnavailable',
          message: 'Catalog availability mode is set to Unavailable',
          lastTransitionTime: '2026-11-26T12:01:00Z',
        }),
      ],
    });
  });

  it('drops conditions of other types, keeps lastTransitionTime while a status holds, and records the generation seen', () => {
    const before = catalog(
      {
        conditions: [
          cond({ type: 'Ready', status: 'True', reason: 'Whatever' }),
          cond({ type: 'Progressing', status: 'True', reason: 'Retrying', observedGeneration: 2 }),
        ],
      },
      4,
    );
    const status = clusterCatalogStatus(before, { kind: 'serving', serving }, t1);
    expect(status.conditions?.map((c) => [c.type, c.lastTransitionTime, c.observedGeneration])).toEqual([
      ['Progressing', '2026-11-26T11:00:00Z', 4],
      ['Serving', '2026-11-26T12:01:00Z', 4],
    ]);
  });
});

describe('clusterCatalogRequeue', () => {
  const polled = (minutes?: number) => {
    const cc = catalog();
    if (minutes !== undefined) cc.spec.source.image!.pollIntervalMinutes = minutes;
    return cc;
  };
  it.each([
    [
      'serving, polled every 5 minutes',
      polled(5),
      { kind: 'serving', serving } as const,
      { requeueAfter: 300_000 },
    ],
    ['serving, not polled (a digest reference)', polled(), { kind: 'serving', serving } as const, undefined],
    [
      'failed, polled every 5 minutes: retried sooner',
      polled(5),
      { kind: 'failed', terminal: false, message: 'm' } as const,
      { requeueAfter: FailureRetryMs },
    ],
    [
      'failed, not polled: retried all the same',
      polled(),
      { kind: 'failed', terminal: false, message: 'm' } as const,
      { requeueAfter: FailureRetryMs },
    ],
    ['blocked: not retried', polled(5), { kind: 'failed', terminal: true, message: 'm' } as const, undefined],
    ['unavailable: not polled', polled(5), { kind: 'unavailable' } as const, undefined],
  ])('%s', (_, cc, outcome, expected) => {
    expect(clusterCatalogRequeue(cc, outcome)).toEqual(expected);
  });
});

describe('the ClusterCatalog condition constants', () => {
  // operator-controller's own list, where its Go module is on this machine.
  const goFile = `${process.env.HOME ?? '/root'}/go/pkg/mod/github.com/operator-framework/operator-controller@v1.2.0/api/v1/common_types.go`;
  it.skipIf(!existsSync(goFile))(
    "are v1.2.0's types and every Serving and Progressing reason it declares",
    () => {
      const go = readFileSync(goFile, 'utf8');
      const value = (name: string) => new RegExp(`\\b${name}\\s*=\\s*"([^"]+)"`).exec(go)?.[1];
      expect(Object.values(ClusterCatalogConditionType).sort()).toEqual(
        [value('TypeProgressing'), value('TypeServing')].sort(),
      );
      const reasons = [
        'ReasonSucceeded',
        'ReasonRetrying',
        'ReasonBlocked',
        'ReasonAvailable',
        'ReasonUnavailable',
        'ReasonUserSpecifiedUnavailable',
      ];
      expect(Object.values(ClusterCatalogConditionReason).sort()).toEqual(reasons.map(value).sort());
    },
  );
});
