/**
 * A fast reader for the plain block YAML that catalogs and most manifests are written in: block
 * mappings and sequences, plain and quoted scalars (also over several lines), literal block
 * scalars (`|`), comments, and empty `[]`/`{}`. It reads line by line with native searches where
 * js-yaml walks every character through a general state machine, which makes it about twice as
 * fast on catalogs and CRDs.
 *
 * It reads exactly what js-yaml (core schema) reads, or gives up: anything outside that subset
 * (anchors, tags, flow collections, folded scalars, tabs in indentation, CRLF, duplicate keys,
 * anything js-yaml would reject) makes it return `undefined`, and the caller parses the text with
 * js-yaml, which also words the errors. Scalars are resolved with js-yaml's own core-schema types,
 * so `1.0`, `~` or `0x1F` mean what they mean there.
 */
import jsyaml from 'js-yaml';
import type { ParsedDoc } from './yaml.js';

/** Thrown (and caught in readBlockYaml) when the text leaves the subset. */
class GiveUp {}
const giveUp = new GiveUp();
function bail(): never {
  throw giveUp;
}

/**
 * The core schema's implicit types (null, bool, int, float), in the order js-yaml tries them on a
 * plain scalar. Its typings do not declare the field; without it this reader stays unused.
 */
export const implicitTypes: readonly jsyaml.Type[] =
  (jsyaml.CORE_SCHEMA as unknown as { compiledImplicit?: jsyaml.Type[] }).compiledImplicit ?? [];

/** Only a plain scalar starting with one of these can be anything but a string in the core schema. */
const MAY_RESOLVE = new Uint8Array(128);
for (const c of '0123456789+-.~nNtTfF') MAY_RESOLVE[c.charCodeAt(0)] = 1;

function resolvePlain(s: string): unknown {
  if (MAY_RESOLVE[s.charCodeAt(0)] !== 1) return s;
  for (const t of implicitTypes) if (t.resolve(s)) return t.construct(s) as unknown;
  return s;
}

const LF = 0x0a;
const SPACE = 0x20;
const TAB = 0x09;
const HASH = 0x23;
const DASH = 0x2d;
const COLON = 0x3a;
const SQUOTE = 0x27;
const DQUOTE = 0x22;
const PIPE = 0x7c;
const BACKSLASH = 0x5c;

/** Characters that start something other than a plain scalar (or a key) at a value's start. */
const NOT_PLAIN = new Uint8Array(128);
for (const c of '[]{},#&*!|>\'"%@`?:-\t') NOT_PLAIN[c.charCodeAt(0)] = 1;

/**
 * What js-yaml rejects as non-printable in plain and block scalars (its own pattern), and a
 * quicker first test that also matches surrogate pairs, which are fine.
 */
const MAYBE_NON_PRINTABLE = /[^\t\n\r -~\x85\xA0-\uD7FF\uE000-\uFFFD]/;
const NON_PRINTABLE =
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  /[\x00-\x08\x0B\x0C\x0E-\x1F\x7F-\x84\x86-\x9F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?:[^\uD800-\uDBFF]|^)[\uDC00-\uDFFF]/;

/** YAML's one-character escapes in double-quoted scalars (`\x`, `\u` and `\U` take hex digits). */
const SIMPLE_ESCAPES: (string | undefined)[] = [];
for (const [c, v] of Object.entries({
  '0': '\0',
  a: '\x07',
  b: '\b',
  t: '\t',
  '\t': '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  e: '\x1b',
  ' ': ' ',
  '"': '"',
  '/': '/',
  '\\': '\\',
  N: '\x85',
  _: '\xa0',
  L: '\u2028',
  P: '\u2029',
}))
  SIMPLE_ESCAPES[c.charCodeAt(0)] = v;

/** Deeper nesting is left to js-yaml, which refuses more than 100 levels of nodes. */
const MAX_DEPTH = 90;

/**
 * Reads a YAML stream (without a byte order mark) into its documents, as `jsyaml.loadAll` with
 * the core schema would, skipping empty ones but counting them; `undefined` when the text is not
 * in the subset this reader knows.
 */
export function readBlockYaml(input: string): ParsedDoc[] | undefined {
  if (implicitTypes.length === 0) return undefined;
  if (input.length === 0) return [];
  const text = input.charCodeAt(input.length - 1) === LF ? input : `${input}\n`;
  if (text.includes('\r') || (MAYBE_NON_PRINTABLE.test(text) && NON_PRINTABLE.test(text))) return undefined;
  try {
    return new Reader(text).documents();
  } catch (err) {
    if (err === giveUp) return undefined;
    throw err;
  }
}

/** `-x`, `?x` and `:x` start plain scalars; the indicators alone (before a blank or the line's end) do not. */
function startsPlain(s: string, at: number): boolean {
  const c = s.charCodeAt(at);
  const after = s.charCodeAt(at + 1);
  return (c === DASH || c === 0x3f || c === COLON) && after !== SPACE && after !== LF && after !== TAB;
}

function orNever(index: number): number {
  return index === -1 ? Infinity : index;
}

/**
 * Each read method starts at a position in the text and leaves `this.next` at the start of the
 * next content line after what it read, or the text's end (keys and quoted scalars: just after
 * them).
 */
class Reader {
  private depth = 0;
  private next = 0;
  /** Set by skipBreaks. */
  private breaks = 0;
  private lineIndent = 0;
  /** The first tab at or after `searchedFrom`, and the first `#` after it (Infinity: none; -1: not searched). */
  private tab = -1;
  private hash = -1;
  private searchedFrom = 0;

  constructor(private readonly s: string) {}

  documents(): ParsedDoc[] {
    const s = this.s;
    const docs: ParsedDoc[] = [];
    if (s.charCodeAt(0) === SPACE) bail();
    let index = 0;
    // As js-yaml: a document is read while more than the final line break is left.
    for (let p = 0; p < s.length - 1; index++) {
      p = this.skipToContent(p);
      // js-yaml takes `---` at a document's start as its marker whatever follows it.
      if (s.startsWith('---', p)) p = this.skipToContent(this.endOfLine(p + 3) + 1);
      let value: unknown = null;
      if (p < s.length && !this.isMarker(p, '---') && !this.isMarker(p, '...')) {
        if (s.charCodeAt(p) === SPACE) bail();
        value = this.block(p, 0);
        p = this.next;
      }
      if (p < s.length && !this.isMarker(p, '---')) bail(); // `...` ends, or something misplaced
      if (value !== null) docs.push({ index, value });
    }
    return docs;
  }

  /** `---` or `...` at the start of the line at `p`, followed by a blank or the line's end. */
  private isMarker(p: number, marker: string): boolean {
    const c = this.s.charCodeAt(p + 3);
    return (c === SPACE || c === LF) && this.s.startsWith(marker, p);
  }

  /**
   * The position of the line break ending the line, when from `p` on there are only blanks or,
   * after a blank, a comment; otherwise the text is outside the subset.
   */
  private endOfLine(p: number): number {
    const s = this.s;
    let i = p;
    while (s.charCodeAt(i) === SPACE) i++;
    const c = s.charCodeAt(i);
    if (c === LF) return i;
    if (c === HASH && i > p) return s.indexOf('\n', i);
    return bail();
  }

  /** From the line starting at `p`, skips blank and comment lines; the next line's start, or the end. */
  private skipToContent(p: number): number {
    const s = this.s;
    while (p < s.length) {
      let i = p;
      while (s.charCodeAt(i) === SPACE) i++;
      const c = s.charCodeAt(i);
      if (c === LF) p = i + 1;
      else if (c === HASH) p = s.indexOf('\n', i) + 1;
      else return p;
    }
    return s.length;
  }

  /*
   * Tabs and `#` are rare outside text, so their next positions are found with native searches
   * and kept while reading moves forward (`searchedFrom` is where the last search asked from).
   */

  /** True when [from, to) holds a tab. */
  private hasTab(from: number, to: number): boolean {
    this.rewind(from);
    if (this.tab < from) this.tab = orNever(this.s.indexOf('\t', from));
    return this.tab < to;
  }

  /** Where the first comment in (from, to) starts: a `#` after a space; -1 if none. */
  private commentAt(from: number, to: number): number {
    const s = this.s;
    this.rewind(from);
    if (this.hash <= from) this.hash = orNever(s.indexOf('#', from + 1));
    for (let h = this.hash; h < to; h = orNever(s.indexOf('#', h + 1))) {
      if (s.charCodeAt(h - 1) === SPACE) return h;
    }
    return -1;
  }

  private rewind(from: number): void {
    if (from < this.searchedFrom) this.tab = this.hash = -1; // reading went back: search afresh
    this.searchedFrom = from;
  }

  /** The indentation of the content line at `p`; -1 at the end or a document marker. */
  private level(p: number): number {
    const s = this.s;
    if (p >= s.length || this.isMarker(p, '---') || this.isMarker(p, '...')) return -1;
    let i = p;
    while (s.charCodeAt(i) === SPACE) i++;
    return i - p;
  }

  /**
   * After a plain scalar that ended its line (the next line starts at `p`): whether it goes on in
   * the lines below, as it does when the next line that is not blank (comment or not) is indented
   * deeper than its collection at `indent`. When it does not, `next` is set.
   */
  private continues(p: number, indent: number): boolean {
    const s = this.s;
    for (let q = p; q < s.length;) {
      let i = q;
      while (s.charCodeAt(i) === SPACE) i++;
      if (s.charCodeAt(i) !== LF) {
        if (i - q > indent) return true;
        break;
      }
      q = i + 1;
    }
    this.next = this.skipToContent(p);
    return false;
  }

  /**
   * From a line break at `p`, js-yaml's skipping of blanks and line breaks (tabs count as blanks,
   * comments do not): sets `breaks` and `lineIndent` (spaces at the start of the last line) and
   * returns where the skipping stopped.
   */
  private skipBreaks(p: number): number {
    const s = this.s;
    this.breaks = 0;
    for (;;) {
      let c = s.charCodeAt(p);
      while (c === SPACE || c === TAB) c = s.charCodeAt(++p);
      if (c !== LF) return p;
      p++;
      this.breaks++;
      this.lineIndent = 0;
      while (s.charCodeAt(p) === SPACE) {
        this.lineIndent++;
        p++;
      }
    }
  }

  /** What js-yaml puts where a scalar goes on to the next line after `breaks` line breaks. */
  private static fold(breaks: number): string {
    return breaks === 1 ? ' ' : '\n'.repeat(breaks - 1);
  }

  /**
   * A plain scalar from `start` that goes on past its first line (in a collection at `indent`),
   * read as js-yaml reads it: lines folded into one, up to a comment, a less indented line or the
   * end. A `: ` on the way (a mapping where it cannot be) is left to js-yaml. Sets `next`.
   */
  private plainLines(start: number, indent: number): string {
    const s = this.s;
    let out = '';
    let from = start;
    let to = start;
    let p = start;
    for (;;) {
      const c = s.charCodeAt(p);
      if (p >= s.length) break;
      if (c === COLON) {
        const after = s.charCodeAt(p + 1);
        if (after === SPACE || after === TAB || after === LF) bail();
      } else if (c === HASH && (s.charCodeAt(p - 1) === SPACE || s.charCodeAt(p - 1) === TAB)) {
        // A comment ends the scalar; its line is skipped.
        this.next = this.skipToContent(s.indexOf('\n', p) + 1);
        return out + s.slice(from, to);
      } else if (c === LF) {
        const q = this.skipBreaks(p);
        if (q >= s.length || this.lineIndent <= indent) break;
        if (s.charCodeAt(q) === HASH) {
          // js-yaml ends the scalar here, without the break.
          this.next = this.skipToContent(s.indexOf('\n', q) + 1);
          return out + s.slice(from, to);
        }
        out += s.slice(from, to) + Reader.fold(this.breaks);
        from = to = p = q;
        continue;
      }
      if (c !== SPACE && c !== TAB) to = p + 1;
      p++;
    }
    this.next = this.skipToContent(s.indexOf('\n', to) + 1);
    return out + s.slice(from, to);
  }

  /**
   * A quoted scalar at `at` (all of a double-quoted one; a single-quoted one that goes on past its
   * line), read as js-yaml reads it: escapes in double quotes, each line's trailing blanks and the
   * next one's leading blanks folded away, and `\` before a line break joining the lines. Sets
   * `next` past the closing quote.
   */
  private quotedLines(at: number): string {
    const s = this.s;
    const double = s.charCodeAt(at) === DQUOTE;
    let out = '';
    let from = at + 1;
    let to = from;
    for (let p = from; ;) {
      const c = s.charCodeAt(p);
      if (p >= s.length) bail(); // not closed
      if (double ? c === DQUOTE : c === SQUOTE) {
        if (!double && s.charCodeAt(p + 1) === SQUOTE) {
          out += s.slice(from, p + 1);
          from = to = p += 2;
          continue;
        }
        this.next = p + 1;
        return out + s.slice(from, p);
      }
      if (double && c === BACKSLASH) {
        out += s.slice(from, p);
        if (s.charCodeAt(p + 1) === LF) {
          p = this.nextQuotedLine(p + 1);
        } else {
          out += this.escape(p);
          p = this.next;
        }
        from = to = p;
        continue;
      }
      if (c === LF) {
        out += s.slice(from, to);
        p = this.nextQuotedLine(p);
        out += Reader.fold(this.breaks);
        from = to = p;
        continue;
      }
      p++;
      if (c !== SPACE && c !== TAB) to = p;
    }
  }

  /**
   * Inside a quoted scalar, from the line break at `p` to the next line's text (as skipBreaks).
   * js-yaml refuses a document marker at the start of any line a quoted scalar goes on to, whether
   * the break was plain or escaped; so does this reader (it gives up).
   */
  private nextQuotedLine(p: number): number {
    const s = this.s;
    p = this.skipBreaks(p);
    if (this.lineIndent === 0 && (s.startsWith('---', p) || s.startsWith('...', p))) bail();
    return p;
  }

  /** A mapping or sequence at the content line `p` with indentation `indent`. */
  private block(p: number, indent: number): unknown {
    this.enter();
    const at = p + indent;
    return this.leave(this.isEntry(at) ? this.sequence(p, indent) : this.mapping(at, indent));
  }

  /** Around reading a nested collection: `enter()`, then `leave(what was read)`. */
  private enter(): void {
    if (++this.depth > MAX_DEPTH) bail(); // deeper than js-yaml allows
  }

  private leave<T>(result: T): T {
    this.depth--;
    return result;
  }

  /** `-` followed by a blank or the line's end. */
  private isEntry(at: number): boolean {
    const c = this.s.charCodeAt(at + 1);
    return this.s.charCodeAt(at) === DASH && (c === SPACE || c === LF);
  }

  /** A block mapping with keys at column `indent`, the first starting at `at` (mid-line after `- `). */
  private mapping(at: number, indent: number): Record<string, unknown> {
    const obj: Record<string, unknown> = {};
    let keys = 0;
    for (;;) {
      const key = this.key(at);
      keys++;
      const value = this.value(this.next, indent, false);
      if (key === '__proto__') {
        // As js-yaml: the key stays a key instead of setting the prototype.
        Object.defineProperty(obj, key, { value, enumerable: true, configurable: true, writable: true });
      } else obj[key] = value;
      const next = this.next;
      const level = this.level(next);
      if (level < indent) {
        // A repeated key replaced a value; js-yaml reports it instead. (Counting is cheaper than
        // looking each key up before it is set.)
        if (Object.keys(obj).length !== keys) bail();
        return obj;
      }
      if (level > indent) bail();
      at = next + indent;
      if (this.isEntry(at)) bail(); // a sequence entry where a key belongs
    }
  }

  /** A block sequence of `-` entries at column `indent`; the first is on the line at `p`. */
  private sequence(p: number, indent: number): unknown[] {
    const out: unknown[] = [];
    for (;;) {
      const value = this.value(p + indent + 1, indent, true);
      out.push(value);
      const next = this.next;
      const level = this.level(next);
      if (level < indent) {
        // After an entry with nothing in it, js-yaml takes the next `-` as this sequence's
        // whatever its indentation.
        if (value === null && level >= 0 && this.isEntry(next + level)) bail();
        return out;
      }
      if (level > indent) bail();
      // At the same indentation, either the next entry or the next key of the mapping holding this.
      if (!this.isEntry(next + indent)) return out;
      p = next;
    }
  }

  /** A mapping key at `at`: its text; `next` is set to the position after its `:`. */
  private key(at: number): string {
    const s = this.s;
    const c = s.charCodeAt(at);
    if (c === SQUOTE || c === DQUOTE) {
      const key = this.quoted(at);
      if (this.spansLines(at, this.next)) bail(); // js-yaml: a key cannot span lines
      let i = this.next;
      while (s.charCodeAt(i) === SPACE) i++;
      const after = s.charCodeAt(i + 1);
      if (s.charCodeAt(i) !== COLON || (after !== SPACE && after !== LF)) bail();
      this.next = i + 1;
      return key;
    }
    if (c < 128 && NOT_PLAIN[c] === 1 && !startsPlain(s, at)) bail();
    const eol = s.indexOf('\n', at);
    const i = this.separator(at, eol);
    if (i === -1 || this.hasTab(at, i) || this.commentAt(at, i) !== -1) bail();
    let end = i;
    while (s.charCodeAt(end - 1) === SPACE) end--;
    const text = s.slice(at, end);
    this.next = i + 1;
    // Keys are mostly plain words: only one that could be a number, null or bool is resolved.
    return MAY_RESOLVE[c] === 1 ? String(resolvePlain(text)) : text;
  }

  /** The first `:` in [from, to) followed by a blank or ending the range; -1 if none. */
  private separator(from: number, to: number): number {
    const s = this.s;
    for (let i = s.indexOf(':', from); i !== -1 && i < to; i = s.indexOf(':', i + 1)) {
      const after = s.charCodeAt(i + 1);
      if (i + 1 === to || after === SPACE || after === LF) return i;
    }
    return -1;
  }

  /**
   * The value after a key's `:` or an entry's `-` (at `p`), in a collection at column `indent`.
   * A sequence entry may hold a compact mapping.
   */
  private value(p: number, indent: number, inSequence: boolean): unknown {
    const s = this.s;
    let i = p;
    while (s.charCodeAt(i) === SPACE) i++;
    const c = s.charCodeAt(i);
    if (c === LF || c === HASH) {
      // Nothing on this line: a nested block, a sequence at the key's own indentation, or null.
      const next = this.skipToContent(this.endOfLine(p) + 1);
      const level = this.level(next);
      if (level > indent) return this.block(next, level);
      if (!inSequence && level === indent && this.isEntry(next + indent)) {
        this.enter();
        return this.leave(this.sequence(next, indent));
      }
      this.next = next;
      return null;
    }
    if (c === PIPE) return this.literal(i, indent);
    if (c === SQUOTE || c === DQUOTE) {
      const text = this.quoted(i);
      const end = this.next;
      // Only a scalar on one line can be a compact mapping's key.
      if (inSequence && !this.spansLines(i, end) && this.colonFollows(end))
        return this.compactMapping(i, indent);
      this.next = this.skipToContent(this.endOfLine(end) + 1);
      return text;
    }
    if (c === 0x5b || c === 0x7b) {
      // `[]` or `{}` only.
      if (s.charCodeAt(i + 1) !== c + 2) bail();
      this.next = this.skipToContent(this.endOfLine(i + 2) + 1);
      return c === 0x5b ? [] : {};
    }
    if (inSequence && this.isEntry(i)) {
      // `- - x`: a sequence in a sequence, its entries lined up with the inner `-`.
      const lineStart = s.lastIndexOf('\n', i) + 1;
      if (i - lineStart <= indent) bail();
      this.enter();
      return this.leave(this.sequence(lineStart, i - lineStart));
    }
    if (c < 128 && NOT_PLAIN[c] === 1 && !startsPlain(s, i)) bail();
    // A plain scalar to the end of the line or a comment (or a compact mapping's first key).
    const eol = s.indexOf('\n', i);
    if (this.hasTab(i, eol)) bail();
    const comment = this.commentAt(i, eol);
    let end = comment === -1 ? eol : comment;
    while (s.charCodeAt(end - 1) === SPACE) end--;
    if (this.separator(i, end) !== -1) {
      if (inSequence) return this.compactMapping(i, indent);
      bail();
    }
    const text = s.slice(i, end);
    // A plain scalar that runs to the line's end may go on in the lines below; one cut short by a
    // comment may not.
    if (comment !== -1) this.next = this.skipToContent(eol + 1);
    else if (this.continues(eol + 1, indent)) return resolvePlain(this.plainLines(i, indent));
    return MAY_RESOLVE[c] === 1 ? resolvePlain(text) : text;
  }

  /** `- key: value`: a mapping whose keys line up with the first one, at `at`. */
  private compactMapping(at: number, indent: number): unknown {
    const column = at - (this.s.lastIndexOf('\n', at) + 1);
    if (column <= indent) bail();
    this.enter();
    return this.leave(this.mapping(at, column));
  }

  /** A `:` (after blanks) followed by a blank or the line's end. */
  private colonFollows(p: number): boolean {
    const s = this.s;
    while (s.charCodeAt(p) === SPACE) p++;
    const after = s.charCodeAt(p + 1);
    return s.charCodeAt(p) === COLON && (after === SPACE || after === LF);
  }

  /** A quoted scalar at `at`, on one line or more; `next` is set to the position after it. */
  private quoted(at: number): string {
    return (this.s.charCodeAt(at) === SQUOTE ? this.singleQuoted(at) : undefined) ?? this.quotedLines(at);
  }

  /** True when a line break lies between `from` and `to`. */
  private spansLines(from: number, to: number): boolean {
    const eol = this.s.indexOf('\n', from);
    return eol !== -1 && eol < to;
  }

  /**
   * `'...'` closed on its line, `''` standing for `'`; `next` is set to the position after it.
   * Undefined when it goes on to the next line.
   */
  private singleQuoted(at: number): string | undefined {
    const s = this.s;
    const eol = s.indexOf('\n', at);
    let out = '';
    for (let i = at + 1; ;) {
      const q = s.indexOf("'", i);
      if (q === -1 || q > eol) return undefined;
      if (s.charCodeAt(q + 1) === SQUOTE) {
        out += s.slice(i, q + 1);
        i = q + 2;
      } else {
        this.next = q + 1;
        return out + s.slice(i, q);
      }
    }
  }

  /** The escape at `at` (a backslash) in a double-quoted scalar; `next` is set past it. */
  private escape(at: number): string {
    const s = this.s;
    let i = at + 1;
    const e = s.charCodeAt(i);
    const simple = e < 128 ? SIMPLE_ESCAPES[e] : undefined;
    if (simple !== undefined) {
      this.next = i + 1;
      return simple;
    }
    const digits = e === 0x78 ? 2 : e === 0x75 ? 4 : e === 0x55 ? 8 : bail(); // x, u, U
    let code = 0;
    for (let k = 0; k < digits; k++) {
      const h = parseInt(s[++i] ?? '', 16);
      if (Number.isNaN(h)) bail();
      code = (code << 4) + h; // as js-yaml computes it, overflow included
    }
    this.next = i + 1;
    return code <= 0xffff
      ? String.fromCharCode(code)
      : String.fromCharCode(((code - 0x10000) >> 10) + 0xd800, ((code - 0x10000) & 0x3ff) + 0xdc00);
  }

  /**
   * A literal block scalar (`|`, with optional chomping and indentation indicators) whose header
   * is at `at`, in a collection at column `indent`. Follows js-yaml's reading line for line,
   * including how it detects the content's indentation.
   */
  private literal(at: number, indent: number): string {
    const s = this.s;
    let chomp: 'clip' | 'strip' | 'keep' = 'clip';
    let explicit = 0;
    let i = at + 1;
    for (;;) {
      const c = s.charCodeAt(i);
      if ((c === 0x2b || c === DASH) && chomp === 'clip') chomp = c === DASH ? 'strip' : 'keep';
      else if (c >= 0x31 && c <= 0x39 && explicit === 0) explicit = c - 0x30;
      else break;
      i++;
    }
    let p = this.endOfLine(i) + 1;
    let textIndent = explicit ? indent + explicit : indent + 1;
    let detected = explicit !== 0;
    let emptyLines = 0;
    let didRead = false;
    let out = '';
    for (;;) {
      let j = p;
      let lineIndent = 0;
      while ((!detected || lineIndent < textIndent) && s.charCodeAt(j) === SPACE) {
        lineIndent++;
        j++;
      }
      if (!detected && lineIndent > textIndent) textIndent = lineIndent;
      if (j < s.length && s.charCodeAt(j) === LF) {
        emptyLines++;
        p = j + 1;
        continue;
      }
      if (j >= s.length || lineIndent < textIndent) {
        if (chomp === 'keep') out += '\n'.repeat(didRead ? 1 + emptyLines : emptyLines);
        else if (chomp === 'clip' && didRead) out += '\n';
        this.next = this.skipToContent(p);
        return out;
      }
      out += '\n'.repeat(didRead ? 1 + emptyLines : emptyLines);
      didRead = true;
      detected = true;
      emptyLines = 0;
      const eol = s.indexOf('\n', j);
      out += s.slice(j, eol);
      p = eol + 1;
    }
  }
}
