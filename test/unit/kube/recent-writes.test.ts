import { describe, expect, it } from 'vitest';
import { RecentWrites } from '../../../src/kube/recent-writes.js';

const obj = (rv: string, status: unknown, uid = 'u1') => ({
  apiVersion: 'v1',
  kind: 'Thing',
  metadata: { name: 'a', uid, resourceVersion: rv },
  status,
});

describe('RecentWrites', () => {
  it('keeps the written status until the cache holds the written resourceVersion', () => {
    const recent = new RecentWrites();
    recent.remember(obj('5', { step: 2 }));
    expect(recent.freshest(obj('4', { step: 1 })).status).toEqual({ step: 2 });
    // Another object is untouched.
    expect(recent.freshest(obj('4', { step: 1 }, 'u2')).status).toEqual({ step: 1 });
    // The cache caught up: from now on the cached object is read as it is.
    expect(recent.freshest(obj('5', { step: 2 })).status).toEqual({ step: 2 });
    expect(recent.freshest(obj('6', { step: 3 })).status).toEqual({ step: 3 });
  });

  it('the newest write wins, and keeps the cached metadata', () => {
    const recent = new RecentWrites();
    recent.remember(obj('5', { step: 2 }));
    recent.remember(obj('6', { step: 3 }));
    const seen = {
      ...obj('5', { step: 2 }),
      metadata: { ...obj('5', {}).metadata, annotations: { a: 'b' } },
    };
    const fresh = recent.freshest(seen);
    expect(fresh.status).toEqual({ step: 3 });
    expect(fresh.metadata.annotations).toEqual({ a: 'b' });
  });

  it('forgets a write after its time, should the cache never show that resourceVersion', () => {
    let now = 0;
    const recent = new RecentWrites(1_000, () => now);
    recent.remember(obj('5', { step: 2 }));
    now = 999;
    expect(recent.freshest(obj('4', { step: 1 })).status).toEqual({ step: 2 });
    now = 1_001;
    expect(recent.freshest(obj('7', { step: 9 })).status).toEqual({ step: 9 });
    now = 1_002;
    expect(recent.freshest(obj('4', { step: 1 })).status).toEqual({ step: 1 });
  });

  it('forgets old writes of objects no longer read when it remembers another', () => {
    let now = 0;
    const recent = new RecentWrites(1_000, () => now);
    recent.remember(obj('5', { step: 2 }, 'gone'));
    now = 2_000;
    recent.remember(obj('6', { step: 1 }, 'u1'));
    expect(recent.size).toBe(1);
  });
});
