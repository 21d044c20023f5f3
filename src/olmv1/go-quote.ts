/**
 * Go's `strconv.Quote` (what `%q` prints), for messages worded exactly as OLM v1's: printable
 * characters as they are (unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the
 * ASCII space), the usual backslash escapes, `\x` for other ASCII and `\u`/`\U` beyond.
 */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;
const ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

export function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ESCAPES[ch]) out += ESCAPES[ch];
    else if (PRINTABLE.test(ch) && !(cp >= 0xd800 && cp <= 0xdfff)) out += ch;
    else if (cp >= 0xd800 && cp <= 0xdfff) out += '\ufffd';
    else if (cp < 0x80) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else if (cp < 0x10000) out += `\\u${cp.toString(16).padStart(4, '0')}`;
    else out += `\\U${cp.toString(16).padStart(8, '0')}`;
  }
  return `${out}"`;
}

/** Go's `%v` of a []string: `[a b c]`. */
export function goList(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}
