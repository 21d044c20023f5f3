import { type ParseArgsConfig, parseArgs } from 'node:util';
import { UsageError } from '../util/errors.js';

/** Where a command reads and writes; injected so that tests can run commands in-process. */
export interface CommandContext {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  short?: string;
  multiple?: boolean;
  default?: string | boolean;
  description: string;
  /** Shown in help after the flag, e.g. `--output FORMAT`. */
  valueName?: string;
}

export type Options = Record<string, OptionSpec>;

/** The values parsed for a command's options; repeated options arrive as arrays. */
export type Values = Record<string, string | boolean | string[] | boolean[] | undefined>;

export interface Invocation {
  values: Values;
  positionals: string[];
  ctx: CommandContext;
}

export interface Command {
  name: string;
  summary: string;
  /** The positional part of the usage line, e.g. `<catalog-dir> <bundle>`. */
  usage?: string;
  description?: string;
  options?: Options;
  /** Least and most positional arguments; checked before `run`. Default: none allowed. */
  args?: { min: number; max: number };
  subcommands?: Command[];
  /** Returns the exit code (0 when it returns nothing). */
  run?: (inv: Invocation) => Promise<number | undefined> | number | undefined;
}

const HELP: OptionSpec = { type: 'boolean', short: 'h', description: 'Show help for this command' };

export interface Resolved {
  path: Command[];
  rest: string[];
}

/** Walks the leading words of argv down the command tree. */
export function findCommand(root: Command, argv: string[]): Resolved {
  const path = [root];
  let i = 0;
  for (; i < argv.length; i++) {
    const word = argv[i]!;
    const here = path[path.length - 1]!;
    if (word.startsWith('-') || !here.subcommands?.length) break;
    const next = here.subcommands.find((c) => c.name === word);
    if (!next) {
      throw new UsageError(
        `unknown command "${word}" for "${commandName(path)}"\nRun '${commandName(path)} --help' for the commands it has.`,
      );
    }
    path.push(next);
  }
  return { path, rest: argv.slice(i) };
}

export function commandName(path: Command[]): string {
  return path.map((c) => c.name).join(' ');
}

/** Parses the flags and arguments of a leaf command, rejecting what it does not declare. */
export function parseInvocation(path: Command[], rest: string[]): { values: Values; positionals: string[] } {
  const cmd = path[path.length - 1]!;
  const specs: Options = { ...cmd.options, help: HELP };
  const name = commandName(path);
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      options: Object.fromEntries(
        Object.entries(specs).map(([k, s]) => [
          k,
          {
            type: s.type,
            ...(s.short ? { short: s.short } : {}),
            ...(s.multiple ? { multiple: true } : {}),
            ...(s.default !== undefined ? { default: s.default } : {}),
          },
        ]),
      ) as ParseArgsConfig['options'],
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    const msg =
      err instanceof Error ? err.message.replace(/\. To specify a positional argument.*$/s, '') : String(err);
    throw new UsageError(`${name}: ${msg}\nRun '${name} --help' for usage.`);
  }
  const values = parsed.values as Values;
  if (values.help) return { values, positionals: parsed.positionals };
  if (cmd.subcommands?.length && parsed.positionals.length > 0) {
    throw new UsageError(
      `unknown command "${parsed.positionals[0]}" for "${name}"\nRun '${name} --help' for the commands it has.`,
    );
  }
  const { min, max } = cmd.args ?? { min: 0, max: 0 };
  const n = parsed.positionals.length;
  if (n < min)
    throw new UsageError(
      `${name}: expected ${cmd.usage ?? `${min} argument(s)`}\nRun '${name} --help' for usage.`,
    );
  if (n > max) {
    throw new UsageError(
      `${name}: unexpected argument "${parsed.positionals[max]}"\nRun '${name} --help' for usage.`,
    );
  }
  return { values, positionals: parsed.positionals };
}

export function renderHelp(path: Command[]): string {
  const cmd = path[path.length - 1]!;
  const name = commandName(path);
  const lines: string[] = [cmd.description ?? cmd.summary, ''];
  const usage = [name];
  if (cmd.subcommands?.length) usage.push('<command>');
  if (cmd.usage) usage.push(cmd.usage);
  if (Object.keys(cmd.options ?? {}).length) usage.push('[flags]');
  lines.push(`Usage:\n  ${usage.join(' ')}`, '');
  if (cmd.subcommands?.length) {
    const width = Math.max(...cmd.subcommands.map((c) => c.name.length));
    lines.push('Commands:');
    for (const c of cmd.subcommands) lines.push(`  ${c.name.padEnd(width)}  ${c.summary}`);
    lines.push('');
  }
  const opts = Object.entries({ ...cmd.options, help: HELP });
  const flag = ([k, s]: [string, OptionSpec]) =>
    `${s.short ? `-${s.short}, ` : '    '}--${k}${s.type === 'string' ? ` ${s.valueName ?? 'VALUE'}` : ''}`;
  const width = Math.max(...opts.map((o) => flag(o).length));
  lines.push('Flags:');
  for (const o of opts) {
    const [, s] = o;
    const extra = [s.multiple ? '(repeatable)' : '', s.default !== undefined ? `(default ${s.default})` : '']
      .filter(Boolean)
      .join(' ');
    lines.push(`  ${flag(o).padEnd(width)}  ${s.description}${extra ? ` ${extra}` : ''}`);
  }
  if (cmd.subcommands?.length) lines.push('', `Run '${name} <command> --help' for more about a command.`);
  return `${lines.join('\n')}\n`;
}

/** Typed accessors for parsed values, so commands do not cast. */
export const str = (v: Values, k: string): string | undefined =>
  typeof v[k] === 'string' ? (v[k] as string) : undefined;
export const strs = (v: Values, k: string): string[] => (Array.isArray(v[k]) ? (v[k] as string[]) : []);
export const bool = (v: Values, k: string): boolean => v[k] === true;
