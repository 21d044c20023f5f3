/**
 * How catalog and bundle commands report: problems one per line on stderr and a summary on stdout,
 * or with `--output json` a single object on stdout that scripts can check:
 * `{"ok", "packages", "bundles", "errors": [{file, object, field, message}], "warnings": [...]}`.
 * The exit code is 0 exactly when `ok`.
 */
import { resolve, sep } from 'node:path';
import { UsageError } from '../../../util/errors.js';
import { formatProblem, type Problem } from '../../../util/result.js';
import { escapeControls } from '../../../util/terminal.js';
import { rawStream } from '../../output.js';
import { type CommandContext, type OptionSpec, str, type Values } from '../../command.js';

export const OutputMode = {
  Text: 'text',
  JSON: 'json',
} as const;
export type OutputMode = (typeof OutputMode)[keyof typeof OutputMode];

export const outputOption: Record<'output', OptionSpec> = {
  output: { type: 'string', valueName: 'FORMAT', description: 'text (default) or json' },
};

export function outputMode(values: Values, name = 'output'): OutputMode {
  const v = str(values, name) ?? OutputMode.Text;
  if (v !== OutputMode.Text && v !== OutputMode.JSON)
    throw new UsageError(`--${name}: "${v}" is not text or json`);
  return v;
}

/** Resolves a path argument against the command's working directory. */
export const argPath = (ctx: CommandContext, p: string): string => resolve(ctx.cwd, p);

/**
 * Shows paths under the working directory relative to it, as the user typed them. A plain prefix
 * cut, not path.relative: names like `b.tar.gz:manifests/../x` must stay as the archive holds them.
 */
export function displayPath(ctx: CommandContext, file: string): string {
  if (file === ctx.cwd) return '.';
  const prefix = ctx.cwd.endsWith(sep) ? ctx.cwd : `${ctx.cwd}${sep}`;
  return file.startsWith(prefix) ? file.slice(prefix.length) : file;
}

export function displayProblem(ctx: CommandContext, p: Problem): Problem {
  return p.file ? { ...p, file: displayPath(ctx, p.file) } : p;
}

export interface Report {
  ok: boolean;
  packages: number;
  bundles: number;
  errors: Problem[];
  warnings: Problem[];
  [extra: string]: unknown;
}

const problemJson = (p: Problem) => ({
  file: p.file ?? null,
  object: p.object ?? null,
  field: p.field ?? null,
  message: p.message,
});

/** Prints the report and returns the exit code. `summary` is the text-mode last line. */
export function emitReport(ctx: CommandContext, mode: OutputMode, report: Report, summary: string): number {
  const errors = report.errors.map((p) => displayProblem(ctx, p));
  const warnings = report.warnings.map((p) => displayProblem(ctx, p));
  if (mode === OutputMode.JSON) {
    ctx.stdout.write(
      `${JSON.stringify({ ...report, errors: errors.map(problemJson), warnings: warnings.map(problemJson) }, null, 2)}\n`,
    );
  } else {
    for (const w of warnings) ctx.stderr.write(`warning: ${formatProblem(w)}\n`);
    for (const e of errors) ctx.stderr.write(`error: ${formatProblem(e)}\n`);
    // One line by contract, though it names packages, bundles and channels from the input.
    (report.ok ? ctx.stdout : ctx.stderr).write(`${escapeControls(summary)}\n`);
  }
  return report.ok ? 0 : 1;
}

export const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export function countSummary(r: Pick<Report, 'errors' | 'warnings'>): string {
  const parts = [];
  if (r.errors.length) parts.push(plural(r.errors.length, 'error'));
  if (r.warnings.length) parts.push(plural(r.warnings.length, 'warning'));
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** A progress line on a terminal, nothing otherwise (logs and pipes stay clean). */
export function progressLine(
  ctx: CommandContext,
  label: string,
): ((done: number, total: number) => void) & { end(): void } {
  const tty = ctx.stderr.isTTY === true;
  let shown = false;
  const fn = (done: number, total: number) => {
    if (!tty) return;
    shown = true;
    rawStream(ctx.stderr).write('\r'); // back to the line's start, on purpose
    ctx.stderr.write(`${label}: ${done}/${total}`);
  };
  return Object.assign(fn, {
    end: () => {
      if (shown) ctx.stderr.write('\n');
    },
  });
}
