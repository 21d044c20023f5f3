/**
 * The manager's logger: pino, writing JSON lines (for collectors, and whenever output is not a
 * terminal) or one readable line per record on a terminal:
 *
 *   07:21:03.412 INFO  installplan complete  kind=InstallPlan namespace=ops name=install-1a2b steps=9
 *
 * The text form is rendered from the same JSON pino produces, so both carry exactly the same data.
 */
import { pino, type Logger } from 'pino';
import { escapeControls } from './terminal.js';

export const LogFormat = { JSON: 'json', Text: 'text' } as const;
export type LogFormat = (typeof LogFormat)[keyof typeof LogFormat];

export const LogLevels = ['debug', 'info', 'warn', 'error'] as const;

export interface LoggerOptions {
  level: string;
  format: LogFormat;
  /** Where lines go (default: stdout). */
  out?: NodeJS.WritableStream;
  /** Fields every record carries, e.g. `{ component: 'bosun-manager' }`; left out of text lines. */
  base?: Record<string, unknown>;
}

/** `json` unless the output is a terminal, where people read it. */
export function defaultLogFormat(out: { isTTY?: boolean }): LogFormat {
  return out.isTTY === true ? LogFormat.Text : LogFormat.JSON;
}

export function createLogger(opts: LoggerOptions): Logger {
  const out = opts.out ?? process.stdout;
  const base = opts.base ?? {};
  if (opts.format === LogFormat.JSON) return pino({ level: opts.level, base }, out as pino.DestinationStream);
  const hidden = new Set(['pid', 'hostname', ...Object.keys(base)]);
  const destination = {
    write(line: string) {
      out.write(`${formatLine(line, hidden)}\n`);
    },
  };
  return pino({ level: opts.level, base }, destination);
}

const levelNames: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** One pino JSON line as text; a line that is not a JSON object is passed through unchanged. */
export function formatLine(json: string, hidden: ReadonlySet<string> = new Set(['pid', 'hostname'])): string {
  let rec: unknown;
  try {
    rec = JSON.parse(json);
  } catch {
    return json.trimEnd();
  }
  if (rec === null || typeof rec !== 'object' || Array.isArray(rec)) return json.trimEnd();
  return formatRecord(rec as Record<string, unknown>, hidden);
}

export function formatRecord(
  rec: Record<string, unknown>,
  hidden: ReadonlySet<string> = new Set(['pid', 'hostname']),
): string {
  const { time, level, msg, err, ...fields } = rec;
  const head = [
    typeof time === 'number' ? clockTime(time) : '',
    typeof level === 'number' ? (levelNames[level] ?? String(level)) : String(level ?? ''),
    typeof msg === 'string' ? escapeControls(msg) : '',
  ].filter((s) => s !== '');
  const pairs = Object.entries(fields)
    .filter(([k, v]) => !hidden.has(k) && v !== undefined)
    .map(([k, v]) => `${k}=${fieldValue(v)}`);
  let line = pairs.length > 0 ? `${head.join(' ')}  ${pairs.join(' ')}` : head.join(' ');
  const stack = errorStack(err);
  // A stack's lines are its own layout; each is indented, so a message cannot pass for a record.
  if (stack !== undefined) line += `\n${indent(escapeControls(stack, { keepLayout: true }))}`;
  return line;
}

/** `HH:MM:SS.mmm` in local time: a terminal reader knows the day. */
function clockTime(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/**
 * Plain words stay bare; anything with spaces, quotes, `=` or a control character is JSON-quoted,
 * so a line splits unambiguously. Values carry input (names from catalogs, an API server's
 * messages): control characters JSON leaves as they are (DEL, C1, bidi controls) are escaped too,
 * so a field cannot recolour or rewrite the terminal it is printed on.
 */
function fieldValue(v: unknown): string {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) && escapeControls(v) === v ? v : quoted(v);
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v);
  return quoted(v);
}

const quoted = (v: unknown) => escapeControls(JSON.stringify(v) ?? String(v));

/** pino serialises an `err` field as `{type, message, stack}`; a stack already holds the message. */
function errorStack(err: unknown): string | undefined {
  if (err === undefined || err === null) return undefined;
  if (typeof err !== 'object') return String(err);
  const e = err as { stack?: unknown; message?: unknown };
  if (typeof e.stack === 'string') return e.stack;
  if (typeof e.message === 'string') return e.message;
  return JSON.stringify(err);
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
}
