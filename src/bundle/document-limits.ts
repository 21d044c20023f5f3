/**
 * How much one YAML or JSON document may make the codec (yaml.ts) do. Catalogs, bundles and
 * manifests come from outside (a catalog file, a ConfigMap, an HTTP server, an image), and a few
 * bytes can otherwise cost minutes and gigabytes, or the stack:
 * - a YAML alias bomb ("billion laughs"): js-yaml shares aliased nodes, so parsing is cheap, and
 *   whatever walks or writes the result then expands every alias;
 * - an alias that refers to a node containing it: a cycle, which no walk ends;
 * - nesting 10^5 levels deep: every recursive walk (the schema check, JSON.stringify, js-yaml's
 *   dump) overflows the stack;
 * - one huge document, parsed whole.
 *
 * The limits are the 2021 OperatorHub corpus's needs with wide headroom (measured over its 5282
 * YAML files and its 1399-document catalog, see the figures below), so no real catalog or bundle
 * meets them.
 */
import { isRecord } from '../util/record.js';

export const DocumentLimits = {
  /**
   * Levels of nesting (a scalar inside a map inside a list is 3). The corpus's deepest manifest
   * (a cert-manager CRD schema) has 39, its deepest catalog document 20; js-yaml refuses more than
   * 100 itself, and JSON is held to the same.
   */
  maxDepth: 100,
  /**
   * Nodes that aliases add to one document when expanded. The corpus uses no anchor or alias at
   * all; a manifest that repeats a block a few times stays far below this, a bomb does not.
   */
  maxAliasNodes: 100_000,
  /**
   * Characters of one document as parsed (a catalog's inline manifests are lifted out before, see
   * catalog/payloads.ts). The corpus's largest catalog document is 1.3 MB with its manifests
   * (0.5 MB without), its largest manifest 0.9 MB; the API server takes objects of at most 3 MiB.
   */
  maxDocumentChars: 16 * 2 ** 20,
} as const;

const MiB = 2 ** 20;
const inMiB = (n: number) => `${(n / MiB).toFixed(1)} MiB`;

/** The refusal of a document past maxDocumentChars. */
export function documentTooLarge(chars: number, where: string): string {
  return `${where} is ${inMiB(chars)}, past the limit of ${inMiB(DocumentLimits.maxDocumentChars)} for one document; nothing of it was read`;
}

/** The refusal of nesting past maxDepth. */
export function nestedTooDeep(where: string): string {
  return `${where} nests more than ${DocumentLimits.maxDepth} levels deep; documents are refused past that depth`;
}

/**
 * In a YAML stream, the most characters between two document markers (`---` or `...` at the start
 * of a line, which YAML forbids anywhere else, even inside a string) and where that document starts.
 */
export function largestYamlDocument(text: string): { chars: number; start: number } {
  let largest = { chars: 0, start: 0 };
  let start = 0;
  const consider = (end: number) => {
    if (end - start > largest.chars) largest = { chars: end - start, start };
  };
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    const c = text.charCodeAt(i + 1);
    if ((c === 0x2d || c === 0x2e) && text.startsWith(c === 0x2d ? '---' : '...', i + 1)) {
      const after = text.charCodeAt(i + 4);
      if (Number.isNaN(after) || after === 0x20 || after === 0x0a || after === 0x0d || after === 0x09) {
        consider(i + 1);
        start = i + 1;
      }
    }
  }
  consider(text.length);
  return largest;
}

export type Unaliased = { ok: true; value: unknown } | { ok: false; message: string };

/**
 * A value js-yaml parsed, made a plain tree: aliases (nodes reached more than once) are copied,
 * so that what reads or changes the documents later sees what Kubernetes' YAML-to-JSON sees,
 * each alias expanded. Refused, before anything is copied, when an alias refers to a node that
 * contains it, when the aliases would add more than maxAliasNodes nodes, or when expanding them
 * nests deeper than maxDepth. The walk is iterative and stops at the first excess, so its cost
 * is bounded by the document's size plus the limit, whatever the aliases.
 */
export function unalias(value: unknown, where: string): Unaliased {
  const seen = new Set<object>();
  const onPath = new Set<object>();
  let shared = false;
  /** Nodes reached only through an alias: the ones its expansion adds. */
  let added = 0;
  // Each entry enters a node (`alias`: reached through one), or leaves one on the path (`exit`).
  const stack: { v: unknown; depth: number; alias: boolean; exit?: boolean }[] = [
    { v: value, depth: 1, alias: false },
  ];
  while (stack.length > 0) {
    const { v, depth, alias: via, exit } = stack.pop()!;
    if (exit) {
      onPath.delete(v as object);
      continue;
    }
    if (depth > DocumentLimits.maxDepth)
      return { ok: false, message: nestedTooDeep(`${where}, with its aliases expanded,`) };
    const isObject = typeof v === 'object' && v !== null;
    if (isObject && onPath.has(v))
      return {
        ok: false,
        message: `${where}: an alias refers to a node that contains it (a cycle), which has no end when expanded`,
      };
    const alias = via || (isObject && seen.has(v));
    if (alias) {
      shared = true;
      if (++added > DocumentLimits.maxAliasNodes)
        return {
          ok: false,
          message: `${where}: its aliases expand to more than ${DocumentLimits.maxAliasNodes} nodes (an alias bomb?); documents are refused past that`,
        };
    }
    if (!isObject) continue;
    seen.add(v);
    onPath.add(v);
    stack.push({ v, depth, alias, exit: true });
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const c of children) stack.push({ v: c, depth: depth + 1, alias });
  }
  return { ok: true, value: shared ? copyTree(value) : value };
}

/**
 * A deep copy (depth and size already bounded by unalias). Keys are copied as own data
 * properties, `__proto__` included, as js-yaml made them.
 */
function copyTree(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(copyTree);
  if (!isRecord(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v))
    Object.defineProperty(out, k, {
      value: copyTree(v[k]),
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return out;
}
