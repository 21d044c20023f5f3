/**
 * Where a YAML stream may be cut between documents without changing what it parses to, so that
 * a large catalog file is read and parsed a window of whole documents at a time (load-part.ts).
 *
 * A line that starts with `---` followed by a blank or the line's end is a document marker
 * wherever it stands: YAML forbids such a line inside any scalar or collection (the spec's
 * c-forbidden), so each document before it ends there. A stream with a directive (`%YAML`,
 * `%TAG`), which belongs to the document after it, or one that is JSON, is never cut; the caller
 * then reads it whole, as every file was read before.
 */

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const DASH = 0x2d;
const PERCENT = 0x25;

/**
 * The offset of the last document marker line in `buf[0, end)` after its first byte, or
 * undefined. A marker whose line runs to `end` is not taken: what follows it is not read yet.
 */
export function lastDocumentStart(buf: Buffer, end: number): number | undefined {
  for (let nl = buf.lastIndexOf(LF, end - 1); nl !== -1; nl = nl > 0 ? buf.lastIndexOf(LF, nl - 1) : -1) {
    const at = nl + 1;
    if (at + 3 >= end) continue;
    if (buf[at] !== DASH || buf[at + 1] !== DASH || buf[at + 2] !== DASH) continue;
    const after = buf[at + 3];
    if (after === SPACE || after === TAB || after === LF || after === CR) return at;
  }
  return undefined;
}

/** Whether a stream that begins with `head` is YAML that may be cut at its document markers. */
export function mayCutDocuments(head: Buffer): boolean {
  let i = 0;
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) i = 3; // a UTF-8 byte order mark
  while (head[i] === SPACE || head[i] === LF || head[i] === CR || head[i] === TAB) i++;
  // `{` or `[`: JSON (or a flow collection), read whole as the codec sniffs it.
  return head[i] !== 0x7b && head[i] !== 0x5b;
}

/** Whether `piece` has a directive line, which belongs to the document after it: never cut there. */
export function hasDirective(piece: Buffer): boolean {
  return piece[0] === PERCENT || piece.includes('\n%');
}
