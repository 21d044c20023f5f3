import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { dataStream, rawStream, terminalSafe } from '../../../src/cli/output.js';
import { createLogger, LogFormat } from '../../../src/util/log.js';
import { controlCharacters, TerminalAttacks } from '../../support/terminal-attacks.js';

/** A stream and what was written to it. */
function sink(): { stream: PassThrough & { isTTY?: boolean }; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString()));
  return { stream, text: () => text };
}

const flushed = () => new Promise((r) => setImmediate(r));

describe('terminalSafe', () => {
  it.each(TerminalAttacks)(
    '$name: written as text or as bytes, nothing acts on the terminal',
    async ({ payload }) => {
      const s = sink();
      const out = terminalSafe(s.stream);
      out.write(`name: ${payload}\n`);
      // Bytes split inside a character still come out whole.
      const bytes = Buffer.from(`bytes: ${payload} ✓\n`);
      out.write(bytes.subarray(0, bytes.length - 3));
      out.write(bytes.subarray(bytes.length - 3));
      await flushed();
      expect(controlCharacters(s.text())).toEqual([]);
      expect(s.text()).toContain('✓\n');
    },
  );

  it('keeps the layout of the program`s own text, and the stream`s other properties', () => {
    const s = sink();
    s.stream.isTTY = true;
    const out = terminalSafe(s.stream);
    expect(out.isTTY).toBe(true);
    expect(out.write('a\n\tb\n')).toBe(true);
    expect(rawStream(out)).toBe(s.stream);
    expect(rawStream(s.stream)).toBe(s.stream);
  });

  it('data goes out as it is to a pipe, and escaped to a terminal', async () => {
    const pipe = sink();
    dataStream(terminalSafe(pipe.stream)).write('a\u202eb\n');
    const tty = sink();
    tty.stream.isTTY = true;
    dataStream(terminalSafe(tty.stream)).write('a\u202eb\n');
    await flushed();
    expect(pipe.text()).toBe('a\u202eb\n');
    expect(tty.text()).toBe('a\\u202eb\n');
  });

  it.each(Object.values(LogFormat))(
    'the manager`s %s log through it: inert, and JSON stays JSON',
    async (format) => {
      const s = sink();
      const log = createLogger({ level: 'info', format, out: terminalSafe(s.stream) });
      for (const { payload } of TerminalAttacks)
        log.info({ name: payload, nested: { message: payload } }, 'catalog read');
      await flushed();
      expect(controlCharacters(s.text())).toEqual([]);
      const lines = s.text().trimEnd().split('\n');
      expect(lines).toHaveLength(TerminalAttacks.length);
      if (format === LogFormat.JSON)
        expect(lines.map((l) => (JSON.parse(l) as { name: string }).name)).toEqual(
          TerminalAttacks.map((a) => a.payload),
        );
    },
  );
});
