/**
 * WorkerPool: requests taken as they come, at most `size` workers, each answer given to its own
 * request; a worker that dies (an error, running out of its heap, exiting on its own) fails its
 * request and every one after instead of leaving them waiting, and close() ends every worker.
 */
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../src/util/workers.js';

/** A worker from plain JavaScript (vitest cannot start one from TypeScript): doubles `n`, or misbehaves as asked. */
const code = `
const { parentPort, threadId } = require('node:worker_threads');
parentPort.on('message', (q) => {
  if (q.n === -1) throw new Error('boom');
  if (q.n === -2) process.exit(3);
  if (q.n === -3) { const keep = []; for (;;) keep.push(new Array(1e6).fill(q)); }
  setTimeout(() => parentPort.postMessage({ id: q.id, doubled: q.n * 2, thread: threadId }), q.delay ?? 0);
});
`;
const started: Worker[] = [];
const start = () => {
  const w = new Worker(code, { eval: true, resourceLimits: { maxOldGenerationSizeMb: 32 } });
  started.push(w);
  return w;
};
type Q = { n: number; delay?: number };
type R = { doubled: number; thread: number };

describe('a worker pool', () => {
  it('answers each request, in any order of arrival, with at most `size` workers', async () => {
    const pool = new WorkerPool<Q, R>(start, 2, (q) => `request ${q.n}`);
    try {
      const answers = await Promise.all([5, 1, 4, 2, 3].map((n) => pool.run({ n, delay: n * 5 })));
      expect(answers.map((a) => a.doubled)).toEqual([10, 2, 8, 4, 6]);
      expect(new Set(answers.map((a) => a.thread)).size).toBeLessThanOrEqual(2);
    } finally {
      await pool.close();
    }
  });

  it.each([
    ['throws', -1, /boom/],
    ['exits on its own', -2, /exit code 3/],
    ['runs out of its heap', -3, /memory|heap/i],
  ])(
    'fails the request of a worker that %s, and every one after, never leaving one waiting',
    async (_what, n, why) => {
      const pool = new WorkerPool<Q, R>(start, 1, (q) => `request ${q.n}`);
      try {
        const bad = pool.run({ n });
        const after = pool.run({ n: 7 });
        await expect(bad).rejects.toThrow(why);
        await expect(after).rejects.toThrow(why);
        await expect(pool.run({ n: 8 })).rejects.toThrow(why);
      } finally {
        await pool.close();
      }
    },
    30_000,
  );

  it('ends every worker when closed', async () => {
    const pool = new WorkerPool<Q, R>(start, 2, (q) => `request ${q.n}`);
    await Promise.all([pool.run({ n: 1 }), pool.run({ n: 2, delay: 10 })]);
    const mine = started.slice(-2);
    const exited = mine.map((w) => new Promise((r) => w.once('exit', r)));
    await pool.close();
    await Promise.all(exited);
    await expect(pool.run({ n: 3 })).rejects.toThrow(/closed/);
  });
});
