/**
 * What a catalog parse holds in the manager's memory: the load worker's young generation stays
 * within its limit however much garbage a parse makes, and the worker reads part after part into
 * one buffer, which never mixes one part's bytes into another's documents, and it loads only what
 * parsing needs.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import {
  KeptBufferBytes,
  LoadWorkerLimits,
  parsePart,
  partAdder,
  reusedBuffer,
} from '../../../src/catalog/load.js';
import { emptyConfig } from '../../../src/apis/fbc.js';
import { hasPackage, modulesLoadedBy } from '../../support/module-graph.js';
import { tempDir } from '../../support/temp-dir.js';

/**
 * A worker (plain JavaScript: vitest cannot start one from TypeScript) that makes a parse's kind
 * of garbage, 400 MB of short strings and objects of which little lives, and answers with the
 * largest its young generation (new space) grew to.
 */
const garbage = `
const { parentPort } = require('node:worker_threads');
const v8 = require('node:v8');
const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size;
let largest = newSpace();
const kept = [];
for (let round = 0; round < 400; round++) {
  const docs = [];
  for (let i = 0; i < 2000; i++) docs.push({ name: 'bundle-' + round + '-' + i, text: 'x'.repeat(200) + i });
  if (round % 40 === 0) kept.push(docs[0]);
  largest = Math.max(largest, newSpace());
}
parentPort.postMessage({ largest, kept: kept.length });
`;

function youngGenerationOf(resourceLimits: Worker['resourceLimits']): Promise<number> {
  return new Promise((resolve, reject) => {
    const w = new Worker(garbage, { eval: true, ...(resourceLimits && { resourceLimits }) });
    w.once('message', (m: { largest: number }) => {
      resolve(m.largest);
      void w.terminate();
    });
    w.once('error', reject);
  });
}

describe("the load worker's memory", () => {
  it('keeps its young generation within its limit while a parse makes garbage', async () => {
    const limited = await youngGenerationOf(LoadWorkerLimits);
    const unlimited = await youngGenerationOf(undefined);
    // new_space's largest size under the limit varies from run to run (9 to 15.5 MiB were seen over
    // eight runs, as V8 grows and shrinks its semi-spaces by pages); without the limit it was 32 MiB
    // every time. The comparison, with room for that spread, shows the limit is what holds it down.
    expect(limited).toBeLessThan(0.75 * unlimited);
  }, 30_000);

  it('reads one part after another into one buffer, grown for a larger part and the smaller one freed at once', async () => {
    const buffers = reusedBuffer();
    const seen: Buffer[] = [];
    const lengths: number[] = [];
    for (const size of [16_384, 65_536, 8192])
      await buffers.lend(async (take) => {
        seen.push(take(size));
        lengths.push(seen.at(-1)!.length);
      });
    expect(lengths).toEqual([16_384, 65_536, 8192]);
    // The last two are one memory: the buffer grew for 64 KiB and was lent again (buffers this large never share Node's pool).
    expect(seen[2]!.buffer).toBe(seen[1]!.buffer);
    // The first buffer's memory was handed on when it grew (detached), not left as garbage beside its successor.
    expect(seen[0]!.buffer.byteLength).toBe(0);
  });

  it('gives back the memory of a large part when a much smaller part follows, and keeps a small one', async () => {
    const buffers = reusedBuffer();
    const backing = async (size: number) => {
      let memory: ArrayBufferLike | undefined;
      await buffers.lend(async (take) => void (memory = take(size).buffer));
      return memory!;
    };
    const large = await backing(4 * KeptBufferBytes);
    const half = await backing(2 * KeptBufferBytes);
    // Half the buffer or more: the same memory, read again.
    expect(half).toBe(large);
    const small = await backing(65_536);
    // Less than half of a buffer past KeptBufferBytes: cut down to the part, the large memory freed.
    expect(large.byteLength).toBe(0);
    expect(small.byteLength).toBe(65_536);
    // Within KeptBufferBytes the memory stays for the next small parts, however small.
    const kept = await backing(KeptBufferBytes);
    expect(await backing(8192)).toBe(kept);
    expect(kept.byteLength).toBe(KeptBufferBytes);
  });

  it('lends a buffer of its own to a reader that comes while the buffer is lent', async () => {
    const buffers = reusedBuffer();
    let inner: Buffer | undefined;
    await buffers.lend(async (take) => {
      const outer = take(65_536).fill(1);
      await buffers.lend(async (take2) => void (inner = take2(65_536).fill(2)));
      expect(inner!.buffer).not.toBe(outer.buffer);
      expect(outer.every((b) => b === 1)).toBe(true);
    });
  });

  it('gives each part its own documents when parts of different sizes are read into one buffer', async () => {
    const dir = await tempDir('bosun-load-memory-');
    const long = join(dir, 'long.yaml');
    const short = join(dir, 'short.json');
    const longText = `schema: olm.package\nname: long\ndescription: ${'d'.repeat(5000)}\n---\nschema: olm.channel\npackage: long\nname: stable\nentries: [{name: long.v1}]\n`;
    const shortText = '{"schema":"olm.package","name":"s"}';
    await writeFile(long, longText);
    await writeFile(short, shortText);
    const part = (file: string, text: string) => ({
      name: file,
      file,
      base: 0,
      length: Buffer.byteLength(text),
    });
    const buffers = reusedBuffer();
    const first = await parsePart(part(long, longText), buffers);
    const second = await parsePart(part(short, shortText), buffers);
    expect(second).toEqual(await parsePart(part(short, shortText)));
    expect(second.ok && second.docs).toEqual([{ schema: 'olm.package', name: 's' }]);
    // The first part's documents are copies: reading the second into the same buffer left them as they were.
    expect(first).toEqual(await parsePart(part(long, longText)));
    expect(first.ok && (first.docs[0] as { description: string }).description).toBe('d'.repeat(5000));
  });

  it('loads only what parsing needs: no schema checker, validation or catalog loader', async () => {
    const loaded = await modulesLoadedBy(join(import.meta.dirname, '../../../src/catalog/load-worker.ts'));
    const src = (m: string) => [...loaded].filter((f) => f.endsWith(m));
    // Each of these cost the worker's heap and code (12 MiB of the manager's memory in all, measured on a worker at rest).
    expect(src('/catalog/load.ts')).toEqual([]);
    expect(src('/catalog/schema.ts')).toEqual([]);
    expect(src('/catalog/validate.ts')).toEqual([]);
    expect(hasPackage(loaded, 'ajv')).toBe(false);
    // What it does need is there (the walk follows imports).
    expect(src('/catalog/load-part.ts')).toHaveLength(1);
    expect(loaded).toContain('js-yaml');
  });

  describe('parts kept before they are added (a catalog image read while it is pulled)', () => {
    /** Parts as a worker sends them: each its own copy of one long description, in a package per part. */
    const parts = (n: number, description: string) =>
      Array.from({ length: n }, (_, i) => {
        const docs = JSON.parse(
          JSON.stringify([{ schema: 'olm.package', name: `p${i}`, description }]),
        ) as unknown[];
        return {
          parsed: { ok: true as const, docs, stored: [] },
          part: { name: `p${i}.json`, base: 0, length: 1 },
        };
      });

    it('holds one copy of a repeated long string from the moment each part is kept', () => {
      // A collection on demand, for this measurement only (the manager never forces one).
      setFlagsFromString('--expose-gc');
      const gc = runInNewContext('gc') as () => void;
      const description = 'An operator that does a great many things. '.repeat(6000); // 258 KB
      gc();
      const before = process.memoryUsage().heapUsed;
      const adder = partAdder(emptyConfig(), []);
      const held = parts(40, description).map((p) => adder.keep(p.parsed));
      gc();
      const grown = process.memoryUsage().heapUsed - before;
      // 40 copies would be 10 MiB (the heap holds these one-byte strings at one byte a character); one is 0.25.
      expect(held).toHaveLength(40);
      expect(grown).toBeLessThan(2 * 2 ** 20);
    });

    it('adds parts kept first exactly as parts added at once', () => {
      const description = 'd'.repeat(300);
      const direct = emptyConfig();
      const adder = partAdder(direct, []);
      for (const p of parts(3, description)) adder.add(p.parsed, p.part);
      const later = emptyConfig();
      const keeper = partAdder(later, []);
      const kept = parts(3, description).map((p) => ({ ...p, parsed: keeper.keep(p.parsed) }));
      for (const p of kept) keeper.add(p.parsed, p.part);
      expect(later).toEqual(direct);
      expect(later.packages.map((p) => p.name)).toEqual(['p0', 'p1', 'p2']);
    });
  });
});
