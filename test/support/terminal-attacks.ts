/**
 * Text that acts on a terminal when printed raw: the payload shapes the output tests put in
 * names, paths and messages. Each says what it would do.
 */
export interface TerminalAttack {
  name: string;
  payload: string;
}

export const TerminalAttacks: readonly TerminalAttack[] = [
  // Erases the line printed so far and writes a green success in its place.
  { name: 'CSI erase line and colour', payload: '\x1b[2K\r\x1b[32mvalid catalog\x1b[0m' },
  { name: 'CSI cursor up', payload: '\x1b[1A\x1b[2K' },
  // Sets the window title; some terminals answer title queries into the input.
  { name: 'OSC window title (BEL)', payload: '\x1b]0;owned\x07' },
  { name: 'OSC 8 hyperlink (ST)', payload: '\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\' },
  { name: 'carriage return over the line', payload: 'x\rvalid catalog' },
  { name: 'backspaces over what was printed', payload: 'error\b\b\b\b\bvalid' },
  { name: 'right-to-left override', payload: 'abc\u202egolatac dilav' },
  { name: 'bidi isolate and embedding', payload: '\u2067abc\u2069\u202adef\u202c' },
  // The same CSI in one character, for terminals that read 8-bit controls.
  { name: 'C1 CSI', payload: '\u009b2K\u009b32m' },
  { name: 'DEL and NUL', payload: 'a\x7fb\x00c' },
  // A line of its own, forged inside a one-line message.
  { name: 'newline starting a forged line', payload: 'x\nvalid catalog cat: 1 package' },
];

/**
 * The characters a terminal acts on, as escapeControls defines them, but for newline and tab,
 * which the program's own messages are laid out with.
 */
export function controlCharacters(text: string): string[] {
  const found = text.match(
    // eslint-disable-next-line no-control-regex -- finding control characters is the point
    /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
  );
  return (found ?? []).filter((c) => c !== '\n' && c !== '\t');
}
