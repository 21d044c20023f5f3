import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EdgeKind } from '../../../src/web/client/api.js';
import { layoutGraph, LayoutSizes, type LayoutEdge } from '../../../src/web/client/graph.js';

const nodes = (...ids: string[]) => ids.map((id) => ({ id, label: id }));
const edge = (from: string, to: string, kind: EdgeKind = 'replaces'): LayoutEdge => ({ from, to, kind });

describe('layoutGraph', () => {
  it('puts the bundles in rows in the order given (newest first) and keeps the first of a repeated id', () => {
    const l = layoutGraph(nodes('0.3.0', '0.2.0', '0.1.0', '0.2.0'), []);
    expect(l.nodes.map((n) => [n.id, n.row])).toEqual([
      ['0.3.0', 0],
      ['0.2.0', 1],
      ['0.1.0', 2],
    ]);
    expect(l.nodes[1]!.y - l.nodes[0]!.y).toBe(LayoutSizes.rowHeight);
    expect(l.height).toBe(LayoutSizes.pad * 2 + 2 * LayoutSizes.rowHeight + LayoutSizes.nodeHeight);
  });

  it('routes a replaces chain in the innermost lane and a long skip outside it', () => {
    // The sample operator's stable channel: 0.2.1 replaces 0.1.1 and skips 0.2.0.
    const l = layoutGraph(nodes('0.2.1', '0.2.0', '0.1.1', '0.1.0'), [
      edge('0.1.0', '0.1.1'),
      edge('0.1.1', '0.2.0'),
      edge('0.1.1', '0.2.1'),
      edge('0.2.0', '0.2.1', 'skips'),
    ]);
    const lane = (from: string, to: string) => l.edges.find((e) => e.from === from && e.to === to)!.lane;
    expect(lane('0.1.0', '0.1.1')).toBe(0);
    expect(lane('0.1.1', '0.2.0')).toBe(0);
    expect(lane('0.2.0', '0.2.1')).toBe(0);
    expect(lane('0.1.1', '0.2.1')).toBe(1);
    expect(l.width).toBe(
      LayoutSizes.pad * 3 + LayoutSizes.nodeWidth + LayoutSizes.laneBase + LayoutSizes.laneStep,
    );
  });

  it('draws an upgrade from the lower row up to the higher one, arriving at the right edge', () => {
    const l = layoutGraph(nodes('b', 'a'), [edge('a', 'b')]);
    const right = LayoutSizes.pad + LayoutSizes.nodeWidth;
    const mid = (row: number) => LayoutSizes.pad + row * LayoutSizes.rowHeight + LayoutSizes.nodeHeight / 2;
    const nums = l.edges[0]!.path.match(/-?\d+(\.\d+)?/g)!.map(Number);
    // M x1 y1 C c1x c1y, c2x c2y, x2 y2
    expect(nums[0]).toBe(right);
    expect(nums[1]).toBe(mid(1) + LayoutSizes.portOffset);
    expect(nums[6]).toBe(right);
    expect(nums[7]).toBe(mid(0) - LayoutSizes.portOffset);
    expect(nums[2]).toBeGreaterThan(right);
  });

  it('leaves out edges to bundles outside the channel and to themselves, and says which', () => {
    const l = layoutGraph(nodes('b', 'a'), [
      edge('old', 'a'),
      edge('a', 'a', 'skips'),
      edge('a', 'b'),
      edge('a', 'b'),
    ]);
    expect(l.edges.map((e) => [e.from, e.to])).toEqual([['a', 'b']]);
    expect(l.outside).toEqual([edge('old', 'a'), edge('a', 'a', 'skips')]);
  });

  it('is empty for an empty channel', () => {
    const l = layoutGraph([], []);
    expect(l.nodes).toEqual([]);
    expect(l.edges).toEqual([]);
    expect(l.height).toBe(LayoutSizes.pad * 2);
  });

  it('never puts two arcs that share rows in one lane, and is the same for any edge order (property)', () => {
    const graph = fc.integer({ min: 1, max: 12 }).chain((n) =>
      fc.record({
        n: fc.constant(n),
        edges: fc.array(
          fc.record({
            from: fc.integer({ min: 0, max: n - 1 }),
            to: fc.integer({ min: 0, max: n - 1 }),
            kind: fc.constantFrom<EdgeKind>('replaces', 'skips', 'skipRange'),
          }),
          { maxLength: 30 },
        ),
      }),
    );
    fc.assert(
      fc.property(graph, fc.integer(), ({ n, edges }, seed) => {
        const ids = Array.from({ length: n }, (_, i) => `v${i}`);
        const es = edges.map((e) => edge(ids[e.from]!, ids[e.to]!, e.kind));
        const l = layoutGraph(nodes(...ids), es);
        const span = (e: LayoutEdge) => {
          const a = ids.indexOf(e.from);
          const b = ids.indexOf(e.to);
          return [Math.min(a, b), Math.max(a, b)] as const;
        };
        for (const x of l.edges) {
          for (const y of l.edges) {
            if (x === y || x.lane !== y.lane) continue;
            const [t1, b1] = span(x);
            const [t2, b2] = span(y);
            expect(b1 <= t2 || b2 <= t1, `${x.from}->${x.to} and ${y.from}->${y.to} in lane ${x.lane}`).toBe(
              true,
            );
          }
        }
        const shuffled = [...es].sort(() => ((seed = (seed * 1103515245 + 12345) | 0) & 1 ? 1 : -1));
        const again = layoutGraph(nodes(...ids), shuffled);
        const key = (e: { from: string; to: string; kind: string; lane: number; path: string }) =>
          `${e.from} ${e.to} ${e.kind} ${e.lane} ${e.path}`;
        expect(again.edges.map(key).sort()).toEqual(l.edges.map(key).sort());
        expect(again.width).toBe(l.width);
      }),
    );
  });
});
