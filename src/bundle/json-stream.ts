/**
 * A stream of concatenated JSON documents, as `opm render -o json` writes them (one pretty-printed
 * object after another, no commas, no enclosing array). JSON.parse reads only single documents,
 * so the text is first split where each document's outermost bracket closes, by one scan that
 * skips strings with native searches. The same scan holds each document to DocumentLimits before
 * anything is parsed: its nesting (V8 parses any depth, but every recursive walk of the result
 * afterwards, schema checks and JSON.stringify, overflows the stack) and its length.
 */
import type { Problem } from '../util/result.js';
import { DocumentLimits, documentTooLarge, nestedTooDeep } from './document-limits.js';

export function parseJsonStream(
  text: string,
  file: string,
): { ok: true; docs: unknown[] } | { ok: false; problem: Problem } {
  const split = splitJson(text);
  if (!split.ok) return { ok: false, problem: { file, message: split.message } };
  const docs: unknown[] = [];
  for (const [start, end] of split.spans) {
    try {
      // The common case, one document per file, is parsed without a copy.
      docs.push(JSON.parse(start === 0 && end === text.length ? text : text.slice(start, end)));
    } catch (err) {
      const detail = err instanceof Error ? err.message : 'unterminated document';
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

type Split = { ok: true; spans: [number, number][] } | { ok: false; message: string };

/**
 * Where each document of a JSON stream starts and ends: a document opens with `{` or `[` and ends
 * where that bracket closes. Text the scan cannot make sense of (an unterminated string or
 * document) is given to JSON.parse as one last document, which words the error.
 */
function splitJson(text: string): Split {
  const max = DocumentLimits.maxDepth;
  const spans: [number, number][] = [];
  const tooLarge = (start: number, end: number): Split => ({
    ok: false,
    message: documentTooLarge(end - start, `the document starting at ${position(text, start)}`),
  });
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (depth === 0) {
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
      if (c !== 0x7b && c !== 0x5b) {
        const what = spans.length === 0 ? '"{" or "[" to start a document' : '"{" to start a document';
        return { ok: false, message: `invalid JSON at ${position(text, i)}: expected ${what}` };
      }
      start = i;
    }
    if (c === 0x22) {
      const close = closingQuote(text, i);
      if (close === -1) break;
      i = close;
    } else if (c === 0x7b || c === 0x5b) {
      // `{` or `[` opens a level, and the values in it are one deeper.
      if (++depth + 1 > max) return { ok: false, message: nestedTooDeep(`the JSON at ${position(text, i)}`) };
    } else if (c === 0x7d || c === 0x5d) {
      if (--depth === 0) {
        if (i + 1 - start > DocumentLimits.maxDocumentChars) return tooLarge(start, i + 1);
        spans.push([start, i + 1]);
      }
    }
  }
  if (depth !== 0) {
    if (text.length - start > DocumentLimits.maxDocumentChars) return tooLarge(start, text.length);
    spans.push([start, text.length]);
  }
  return { ok: true, spans };
}

/** The quote that ends the string opened at `open`: one not preceded by an odd number of backslashes. */
function closingQuote(text: string, open: number): number {
  let j = text.indexOf('"', open + 1);
  while (j !== -1) {
    let slashes = 0;
    while (text.charCodeAt(j - 1 - slashes) === 0x5c) slashes++;
    if (slashes % 2 === 0) return j;
    j = text.indexOf('"', j + 1);
  }
  return -1;
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
