import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeControls } from '../../../src/util/terminal.js';
import { formatProblem } from '../../../src/util/result.js';
import { runs } from '../../support/properties.js';
import { controlCharacters, TerminalAttacks } from '../../support/terminal-attacks.js';

describe('escapeControls', () => {
  it.each([
    ['ESC', '\x1b[2K', '\\x1b[2K'],
    ['CR and BS', 'a\rb\bc', 'a\\x0db\\x08c'],
    ['BEL and NUL', '\x07\x00', '\\x07\\x00'],
    ['DEL', '\x7f', '\\u007f'],
    ['C1 CSI and NEL', '\u009b\u0085', '\\u009b\\u0085'],
    ['bidi override', '\u202e', '\\u202e'],
    ['bidi isolates, LRM, RLM, ALM', '\u2066\u2069\u200e\u200f\u061c', '\\u2066\\u2069\\u200e\\u200f\\u061c'],
    ['newline and tab', 'a\nb\tc', 'a\\x0ab\\x09c'],
    ['text without controls', 'café ✓ 日本 Ω', 'café ✓ 日本 Ω'],
    ['a backslash stays', 'a\\x1b', 'a\\x1b'],
  ])('%s', (_, input, expected) => {
    expect(escapeControls(input)).toBe(expected);
  });

  it('keeps newlines and tabs with keepLayout, and nothing else', () => {
    expect(escapeControls('a\n\tb\x1b[0m\r', { keepLayout: true })).toBe('a\n\tb\\x1b[0m\\x0d');
  });

  it.each(TerminalAttacks)('$name: nothing a terminal acts on is left', ({ payload }) => {
    expect(controlCharacters(escapeControls(payload))).toEqual([]);
    expect(escapeControls(payload)).not.toContain('\n');
    expect(controlCharacters(escapeControls(payload, { keepLayout: true }))).toEqual([]);
  });

  it('leaves no control character in any text, and changes text that has none not at all', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (s) => {
        const out = escapeControls(s);
        expect(controlCharacters(out)).toEqual([]);
        expect(out).not.toMatch(/[\n\t]/);
        if (controlCharacters(s).length === 0 && !/[\n\t]/.test(s)) expect(out).toBe(s);
      }),
      runs(500),
    );
  });

  it('keeps JSON valid and its values unchanged (JSON output goes through it too)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string({ unit: 'binary' }), (value, s) => {
        const doc = { value, s };
        const printed = escapeControls(JSON.stringify(doc, null, 2), { keepLayout: true });
        expect(controlCharacters(printed)).toEqual([]);
        expect(JSON.parse(printed)).toEqual(JSON.parse(JSON.stringify(doc)));
      }),
      runs(300),
    );
  });
});

describe('formatProblem', () => {
  it.each(TerminalAttacks)('$name in any part: one line, nothing a terminal acts on', ({ payload }) => {
    const line = formatProblem({
      file: `a${payload}.yaml`,
      object: payload,
      field: payload,
      message: payload,
    });
    expect(controlCharacters(line)).toEqual([]);
    expect(line).not.toContain('\n');
    expect(line).toContain(escapeControls(payload));
  });
});
