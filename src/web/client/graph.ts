/**
 * The layout of a channel's upgrade graph, drawn by the page as SVG: pure geometry, no DOM.
 *
 * Bundles are rows, newest at the top, so a channel reads like a changelog and any number of
 * versions fits the page's width. Every upgrade edge (replaces, skips, a skipRange match) is an
 * arc on the right of the rows, from the bundle upgraded from to the one upgraded to; an arc's
 * lane (how far right it bulges) is the lowest whose arcs it does not overlap, short arcs inner,
 * so arcs never cross a row they do not belong to at the same lane.
 */
import type { EdgeKind } from './api.js';

export interface LayoutNode {
  id: string;
  label: string;
}

export interface LayoutEdge {
  from: string;
  to: string;
  kind: EdgeKind;
}

export interface PlacedNode extends LayoutNode {
  x: number;
  y: number;
  width: number;
  height: number;
  row: number;
}

export interface PlacedEdge extends LayoutEdge {
  lane: number;
  /** SVG path data, from the `from` row to the `to` row. */
  path: string;
}

export interface GraphLayout {
  width: number;
  height: number;
  nodes: PlacedNode[];
  edges: PlacedEdge[];
  /** Edges with an end outside the nodes (e.g. `replaces` naming a bundle of no channel): not drawn. */
  outside: LayoutEdge[];
}

export const LayoutSizes = {
  pad: 8,
  rowHeight: 30,
  nodeHeight: 22,
  nodeWidth: 180,
  /** Bulge of lane 0 and each lane after it. */
  laneBase: 18,
  laneStep: 12,
  /** Edges leave a row below its middle and arrive above it, so an arrow in and one out do not meet. */
  portOffset: 4,
} as const;

/** Places `nodes` (newest first) in rows and routes `edges` as arcs in non-overlapping lanes. */
export function layoutGraph(nodes: readonly LayoutNode[], edges: readonly LayoutEdge[]): GraphLayout {
  const S = LayoutSizes;
  const rowOf = new Map<string, number>();
  const placed: PlacedNode[] = [];
  for (const n of nodes) {
    if (rowOf.has(n.id)) continue; // the first of two nodes with one id stands
    const row = placed.length;
    rowOf.set(n.id, row);
    placed.push({
      ...n,
      row,
      x: S.pad,
      y: S.pad + row * S.rowHeight,
      width: S.nodeWidth,
      height: S.nodeHeight,
    });
  }

  const drawn: LayoutEdge[] = [];
  const outside: LayoutEdge[] = [];
  const seen = new Set<string>();
  for (const e of edges) {
    const key = `${e.from}\0${e.to}\0${e.kind}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const ok = rowOf.has(e.from) && rowOf.has(e.to) && e.from !== e.to;
    (ok ? drawn : outside).push(e);
  }

  // Short spans first, so they take the inner lanes; then top row, then a stable tiebreak.
  const span = (e: LayoutEdge) => {
    const a = rowOf.get(e.from)!;
    const b = rowOf.get(e.to)!;
    return { top: Math.min(a, b), bottom: Math.max(a, b) };
  };
  const ordered = [...drawn].sort((x, y) => {
    const a = span(x);
    const b = span(y);
    return (
      a.bottom - a.top - (b.bottom - b.top) ||
      a.top - b.top ||
      x.kind.localeCompare(y.kind) ||
      x.from.localeCompare(y.from) ||
      x.to.localeCompare(y.to)
    );
  });
  // Per lane, the row spans taken; spans that only touch at a row share the lane (one arrives
  // above that row's middle, the other leaves below it).
  const lanes: { top: number; bottom: number }[][] = [];
  const right = S.pad + S.nodeWidth;
  const placedEdges: PlacedEdge[] = [];
  for (const e of ordered) {
    const s = span(e);
    let lane = lanes.findIndex((taken) => taken.every((t) => t.bottom <= s.top || t.top >= s.bottom));
    if (lane < 0) {
      lane = lanes.length;
      lanes.push([]);
    }
    lanes[lane]!.push(s);
    const fromRow = rowOf.get(e.from)!;
    const toRow = rowOf.get(e.to)!;
    const mid = (row: number) => S.pad + row * S.rowHeight + S.nodeHeight / 2;
    // Upwards (older to newer, the usual case) leaves below the middle and arrives above it.
    const dir = toRow < fromRow ? 1 : -1;
    const y1 = mid(fromRow) + dir * S.portOffset;
    const y2 = mid(toRow) - dir * S.portOffset;
    const bulge = S.laneBase + lane * S.laneStep;
    // A cubic whose control points sit `bulge` to the right reaches 3/4 of it.
    const cx = right + (bulge * 4) / 3;
    placedEdges.push({
      ...e,
      lane,
      path: `M ${right} ${y1} C ${round(cx)} ${y1}, ${round(cx)} ${y2}, ${right} ${y2}`,
    });
  }
  const widest = lanes.length === 0 ? 0 : S.laneBase + (lanes.length - 1) * S.laneStep;
  return {
    width: right + widest + S.pad * 2,
    height: S.pad * 2 + Math.max(0, placed.length - 1) * S.rowHeight + (placed.length ? S.nodeHeight : 0),
    nodes: placed,
    edges: placedEdges,
    outside,
  };
}

const round = (n: number) => Math.round(n * 10) / 10;
