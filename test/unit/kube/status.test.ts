import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../../src/apis/meta.js';
import { Resources } from '../../../src/apis/operators.js';
import { writeStatus } from '../../../src/kube/status.js';

function recorder() {
  const written: KubeObject[] = [];
  return {
    written,
    applier: {
      applyStatus: async <T extends KubeObject>(obj: T) => {
        written.push(obj);
        return obj;
      },
    },
  };
}

// Objects listed from the API server may lack apiVersion and kind: the resource supplies them.
const sub = {
  metadata: { name: 'etcd', namespace: 'ops', resourceVersion: '7' },
  spec: { name: 'etcd' },
  status: { state: 'AtLatestKnown', lastUpdated: '2026-01-01T00:00:00Z' },
};

describe('writeStatus', () => {
  const cases: {
    title: string;
    next: Record<string, unknown>;
    opts?: { ignore?: string[]; current?: unknown; force?: boolean };
    writes: boolean;
  }[] = [
    {
      title: 'the same status is not written',
      next: { state: 'AtLatestKnown', lastUpdated: '2026-01-01T00:00:00Z' },
      writes: false,
    },
    {
      title: 'a new heartbeat alone is not written',
      next: { state: 'AtLatestKnown', lastUpdated: '2026-02-02T00:00:00Z' },
      writes: false,
    },
    {
      title: 'a changed field is written',
      next: { state: 'UpgradePending', lastUpdated: '2026-01-01T00:00:00Z' },
      writes: true,
    },
    {
      title: 'a heartbeat counts when nothing is ignored',
      next: { state: 'AtLatestKnown', lastUpdated: '2026-02-02T00:00:00Z' },
      opts: { ignore: [] },
      writes: true,
    },
    {
      title: 'compared with `current` when given',
      next: { state: 'AtLatestKnown', lastUpdated: '2026-01-01T00:00:00Z' },
      opts: { current: { state: 'UpgradePending' } },
      writes: true,
    },
    {
      title: 'written when forced',
      next: { state: 'AtLatestKnown', lastUpdated: '2026-01-01T00:00:00Z' },
      opts: { force: true },
      writes: true,
    },
  ];
  for (const c of cases) {
    it(c.title, async () => {
      const { applier, written } = recorder();
      const wrote = await writeStatus(applier, {
        resource: Resources.Subscription,
        object: sub,
        next: c.next,
        ...c.opts,
      });
      expect(wrote).toBe(c.writes);
      expect(written).toEqual(
        c.writes
          ? [
              {
                apiVersion: 'operators.coreos.com/v1alpha1',
                kind: 'Subscription',
                metadata: { name: 'etcd', namespace: 'ops' },
                status: c.next,
              },
            ]
          : [],
      );
    });
  }
});
