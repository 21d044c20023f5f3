import { readFileSync } from 'node:fs';
import { accessRefusal } from '../kube/errors.js';
import { UserError } from '../util/errors.js';
import { terminalSafe } from './output.js';
import {
  type Command,
  type CommandContext,
  commandName,
  findCommand,
  parseInvocation,
  renderHelp,
} from './command.js';
import { bundleCommand } from './commands/bundle.js';
import { catalogCommand } from './commands/catalog.js';
import { clusterCommand } from './commands/cluster.js';
import { migrateCommand } from './commands/migrate.js';
import { operatorCommand } from './commands/operator.js';
import { planCommand } from './commands/plan.js';
import { rollbackCommand, upgradeCommand } from './commands/rollback.js';
import { explainCommand, resolveCommand } from './commands/resolve.js';
import { startCommand } from './commands/start.js';

export const version: string = JSON.parse(
  readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
).version;

export const root: Command = {
  name: 'bosun',
  summary: 'Bosun: an Operator Lifecycle Manager for Kubernetes',
  description:
    'Bosun installs Kubernetes operators from catalogs of bundles, resolves their dependencies and\n' +
    "upgrade channels, and keeps them upgraded. It speaks OLM's API. Also usable as `kubectl bosun`.",
  options: { version: { type: 'boolean', short: 'v', description: 'Print the version and exit' } },
  subcommands: [
    startCommand,
    catalogCommand,
    bundleCommand,
    clusterCommand,
    operatorCommand,
    resolveCommand,
    explainCommand,
    planCommand,
    rollbackCommand,
    upgradeCommand,
    migrateCommand,
  ],
};

function processContext(): CommandContext {
  // A reader that goes away (`bosun catalog render | head`) wants no more output: stop quietly,
  // as a program that gets SIGPIPE does, instead of crashing on the write that follows.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    process.exit(process.exitCode ?? 0);
  });
  return { stdout: process.stdout, stderr: process.stderr, cwd: process.cwd(), env: process.env };
}

/**
 * Runs the CLI and returns its exit code: 0 success, 1 failure, 2 bad command line. Everything a
 * command prints goes through terminalSafe: names and messages from catalogs, bundles and
 * clusters cannot act on the terminal (util/terminal.ts).
 */
export async function main(argv: string[], given: CommandContext = processContext()): Promise<number> {
  const ctx: CommandContext = {
    ...given,
    stdout: terminalSafe(given.stdout),
    stderr: terminalSafe(given.stderr),
  };
  try {
    const { path, rest } = findCommand(root, argv);
    const { values, positionals } = parseInvocation(path, rest);
    const cmd = path[path.length - 1]!;
    if (cmd === root && values.version) {
      ctx.stdout.write(`bosun ${version}\n`);
      return 0;
    }
    if (values.help || !cmd.run) {
      ctx.stdout.write(renderHelp(path));
      return 0;
    }
    return (await cmd.run({ values, positionals, ctx })) ?? 0;
  } catch (err) {
    if (err instanceof UserError) {
      ctx.stderr.write(`error: ${err.message}\n`);
      return err.exitCode;
    }
    // A permission the cluster does not grant is the user's to fix, not a bug of Bosun's.
    const refused = accessRefusal(err);
    if (refused !== undefined) {
      ctx.stderr.write(`error: ${refused}\n`);
      return 1;
    }
    ctx.stderr.write(
      `bosun: unexpected error (please report it): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    return 1;
  }
}

export { commandName };
