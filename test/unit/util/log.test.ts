import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, defaultLogFormat, formatLine, formatRecord } from '../../../src/util/log.js';

function capture() {
  const out = new PassThrough();
  const lines: string[] = [];
  out.on('data', (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean)));
  return { out, lines };
}

describe('text log lines', () => {
  const at = new Date(2026, 10, 23, 7, 21, 3, 412).getTime();

  it('puts time, level and message first, then fields as key=value', () => {
    expect(
      formatRecord({ time: at, level: 30, msg: 'installplan complete', kind: 'InstallPlan', steps: 9 }),
    ).toBe('07:21:03.412 INFO  installplan complete  kind=InstallPlan steps=9');
  });

  it('quotes values with spaces or quotes and writes objects as JSON', () => {
    expect(
      formatRecord({ level: 40, msg: 'm', message: 'two words', obj: { a: [1] }, empty: '', q: 'a"b' }),
    ).toBe('WARN  m  message="two words" obj={"a":[1]} empty="" q="a\\"b"');
  });

  it('leaves out pid, hostname and undefined fields', () => {
    expect(formatRecord({ level: 30, msg: 'm', pid: 1, hostname: 'h', x: undefined, y: null })).toBe(
      'INFO  m  y=null',
    );
  });

  it('prints an error stack indented under the line', () => {
    const line = formatRecord({
      level: 50,
      msg: 'reconcile failed',
      err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at f (x.ts:1:1)' },
    });
    expect(line.split('\n')).toEqual([
      'ERROR reconcile failed',
      '    Error: boom',
      '        at f (x.ts:1:1)',
    ]);
  });

  it.each([
    ['ESC (recolour, move the cursor)', '\x1b[32mvalid\x1b[0m', '\\u001b[32mvalid\\u001b[0m'],
    ['a C1 CSI', 'a\u009b2Jb', 'a\\u009b2Jb'],
    ['DEL', 'a\u007fb', 'a\\u007fb'],
    ['a bidi override', 'evil\u202etxt.exe', 'evil\\u202etxt.exe'],
    ['a newline forging a record', 'x\n12:00:00.000 INFO  forged', 'x\\n12:00:00.000 INFO  forged'],
    ['a carriage return', 'ok\rERROR', 'ok\\rERROR'],
  ])('shows %s in a field, the message and an object as escapes, on one line', (_what, input, shown) => {
    const line = formatRecord({ level: 30, msg: `catalog ${input}`, name: input, obj: { name: input } });
    // eslint-disable-next-line no-control-regex -- the characters that must not reach the terminal
    expect(line).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(line).toContain(`name="${shown}"`);
    expect(line).toContain(`obj={"name":"${shown}"}`);
    expect(line.split('  ')[0]).not.toContain(input);
  });

  it('keeps a stack on its own indented lines but escapes what would rewrite the terminal', () => {
    const line = formatRecord({
      level: 50,
      msg: 'm',
      err: { message: 'x', stack: 'Error: pkg \x1b]0;title\x07\u009b\n    at f (x.ts:1:1)' },
    });
    expect(line.split('\n')).toEqual([
      'ERROR m',
      '    Error: pkg \\x1b]0;title\\x07\\u009b',
      '        at f (x.ts:1:1)',
    ]);
  });

  it('passes through a line that is not a JSON object', () => {
    expect(formatLine('not json\n')).toBe('not json');
    expect(formatLine('[1,2]')).toBe('[1,2]');
  });
});

describe('createLogger', () => {
  it('writes JSON lines when asked for json', () => {
    const { out, lines } = capture();
    createLogger({ level: 'info', format: 'json', out, base: { component: 'c' } }).info({ a: 1 }, 'hello');
    const rec = JSON.parse(lines[0] ?? '') as Record<string, unknown>;
    expect(rec).toMatchObject({ level: 30, msg: 'hello', a: 1, component: 'c' });
  });

  it('writes readable lines without the base fields when asked for text', () => {
    const { out, lines } = capture();
    const log = createLogger({ level: 'info', format: 'text', out, base: { component: 'c' } });
    log.debug('hidden by the level');
    log.child({ kind: 'CSV' }).warn({ phase: 'Failed' }, 'csv failed');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d\.\d{3} WARN {2}csv failed {2}kind=CSV phase=Failed$/);
  });

  it('defaults to text on a terminal and JSON otherwise', () => {
    expect(defaultLogFormat({ isTTY: true })).toBe('text');
    expect(defaultLogFormat({})).toBe('json');
  });
});
