/**
 * A stream of concatenated JSON documents, as `opm render -o json` writes them (one pretty-printed
 * object after another, no commas, no enclosing array). JSON.parse reads only single documents,
 * and scanning a 100 MB catalog character by character in JavaScript is slow, so documents are
 * split at the only places a boundary can be: a `}` followed by optional whitespace and then a
 * `{` or the end. Such a sequence can also occur inside a string; then the parse of the shorter
 * piece fails and the piece is extended to the next candidate.
 */
import type { Problem } from '../util/result.js';

const BOUNDARY = /\}\s*(?=\{|$)/g;

export function parseJsonStream(
  text: string,
  file: string,
): { ok: true; docs: unknown[] } | { ok: false; problem: Problem } {
  const docs: unknown[] = [];
  let start = skipSpace(text, 0);
  if (start === text.length) return { ok: true, docs };
  // The common case, one document per file, needs no splitting.
  if (text[start] === '{' || text[start] === '[') {
    try {
      docs.push(JSON.parse(text));
      return { ok: true, docs };
    } catch {
      // several documents, or invalid: split below
    }
  }
  BOUNDARY.lastIndex = start;
  let lastError: unknown;
  while (start < text.length) {
    if (text[start] !== '{') {
      return {
        ok: false,
        problem: {
          file,
          message: `invalid JSON at ${position(text, start)}: expected "{" to start a document`,
        },
      };
    }
    let parsed = false;
    for (let m = BOUNDARY.exec(text); m; m = BOUNDARY.exec(text)) {
      const end = m.index + 1;
      try {
        docs.push(JSON.parse(text.slice(start, end)));
        parsed = true;
        start = skipSpace(text, end);
        BOUNDARY.lastIndex = start;
        break;
      } catch (err) {
        lastError = err;
      }
    }
    if (!parsed) {
      const detail = lastError instanceof Error ? lastError.message : 'unterminated document';
      return {
        ok: false,
        problem: {
          file,
          message: `invalid JSON in the document starting at ${position(text, start)}: ${detail}`,
        },
      };
    }
  }
  return { ok: true, docs };
}

function skipSpace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** `line L, column C` of an offset, for messages. */
export function position(text: string, offset: number): string {
  let line = 1;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    lineStart = i + 1;
  }
  return `line ${line}, column ${offset - lineStart + 1}`;
}
