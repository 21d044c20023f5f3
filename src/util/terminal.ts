/**
 * Text from catalogs, bundles, archives and clusters, printed where a terminal shows it. A
 * terminal acts on control characters instead of showing them: ESC starts sequences that move
 * the cursor, recolour, erase lines, set the window title or make hyperlinks (CSI, OSC); CR and
 * BS write over what was printed; the C1 controls (U+0080 to U+009F) are those sequences in one
 * character for terminals that read them; and Unicode's bidirectional controls reorder what
 * follows them on the line. A package name holding them could rewrite an error line into a green
 * "valid catalog". So every such character that came from input is shown as an escape that says
 * what it was: `\x1b`, `\u009b`, `\u202e`.
 *
 * `escapeControls` is the one function that does it. The bosun command passes everything it
 * prints through it (cli/output.ts), keeping only the newlines and tabs its own messages are laid
 * out with; a message that must stay one line (a problem, a summary) escapes those too, so input
 * cannot start a line of its own.
 */
/* eslint-disable no-control-regex -- matching control characters is what these are for */
/**
 * C0 controls, DEL, C1 controls, and the Bidi_Control characters (ALM, LRM, RLM, the embeddings
 * and overrides U+202A-U+202E, the isolates U+2066-U+2069).
 */
const Controls = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same but for newline (U+000A) and tab (U+0009). */
const ControlsButLayout =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/* eslint-enable no-control-regex */

/**
 * C0 as `\xHH` (as in most languages' string syntax); the rest as `\uHHHH`, which is also what
 * JSON writes, so escaping a JSON text's strings leaves it valid JSON with the same value (JSON
 * already escapes C0 itself, so no `\xHH` ever lands in one).
 */
function escapeOne(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x20
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control character shown as an escape. With `keepLayout`, newlines and tabs
 * stay (for text whose lines are the program's own); without, the result is one line.
 */
export function escapeControls(text: string, opts: { keepLayout?: boolean } = {}): string {
  return text.replace(opts.keepLayout ? ControlsButLayout : Controls, escapeOne);
}
