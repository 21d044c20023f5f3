/**
 * Token buckets, one per key (a client's address) and one for all keys together: what bounds how
 * many reviews a stream of made-up credentials can make the manager send to the API server.
 * Pure but for the clock it is given.
 */

export interface BucketSize {
  /** How many may be taken at once after a quiet spell. */
  burst: number;
  /** How many come back each second. */
  perSecond: number;
}

export interface RateLimiter {
  /** Takes one for `key` (and one overall), or says how many seconds until one is there. */
  take(key: string): { ok: true } | { ok: false; retryAfterSeconds: number };
  /** How many keys it remembers. */
  size(): number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** How many keys are remembered; beyond it, the buckets that are full again are forgotten. */
const MaxKeys = 10_000;

export function rateLimiter(
  limits: { perKey: BucketSize; overall: BucketSize },
  now: () => number = Date.now,
): RateLimiter {
  const keys = new Map<string, Bucket>();
  const overall: Bucket = { tokens: limits.overall.burst, at: now() };

  const refill = (b: Bucket, size: BucketSize, t: number) => {
    b.tokens = Math.min(size.burst, b.tokens + ((t - b.at) / 1000) * size.perSecond);
    b.at = t;
  };
  const wait = (b: Bucket, size: BucketSize) => Math.max(1, Math.ceil((1 - b.tokens) / size.perSecond));

  /** Forgets the buckets that are full again, then the oldest, down to nine tenths of the limit. */
  const forget = (t: number) => {
    for (const [k, b] of keys) {
      refill(b, limits.perKey, t);
      if (b.tokens >= limits.perKey.burst) keys.delete(k);
    }
    // A forgotten bucket starts full again, which only helps its key: a sweep now and then, not on
    // every new key, so many keys cost no more than a few.
    for (const k of keys.keys()) {
      if (keys.size <= MaxKeys * 0.9) break;
      keys.delete(k);
    }
  };

  return {
    take(key) {
      const t = now();
      let b = keys.get(key);
      if (!b) {
        if (keys.size >= MaxKeys) forget(t);
        b = { tokens: limits.perKey.burst, at: t };
        keys.set(key, b);
      }
      refill(b, limits.perKey, t);
      refill(overall, limits.overall, t);
      if (b.tokens < 1) return { ok: false, retryAfterSeconds: wait(b, limits.perKey) };
      if (overall.tokens < 1) return { ok: false, retryAfterSeconds: wait(overall, limits.overall) };
      b.tokens -= 1;
      overall.tokens -= 1;
      return { ok: true };
    },
    size: () => keys.size,
  };
}

/**
 * The key of a client address: an IPv4 address as it is (also when written IPv4-mapped), an IPv6
 * address by its /64, the smallest block one host is given, so one host's addresses share a bucket.
 */
export function sourceKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => Number.parseInt(g || '0', 16).toString(16))
    .join(':')}::/64`;
}
