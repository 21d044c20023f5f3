/**
 * `bosun resolve` and `bosun explain`: resolve Subscriptions against FBC catalogs offline,
 * exactly as the manager does (the same pure `resolve`), and print the plan or why there is none.
 * Read → resolve → print.
 */
import type { ResolutionResult } from '../../resolver/index.js';
import { UsageError } from '../../util/errors.js';
import { escapeControls } from '../../util/terminal.js';
import { type Command, type CommandContext, type Options, str, strs, type Values } from '../command.js';
import { readInput } from './resolve/input.js';

const OutputFormat = { Text: 'text', JSON: 'json' } as const;
type OutputFormat = (typeof OutputFormat)[keyof typeof OutputFormat];

const options: Options = {
  catalog: {
    type: 'string',
    multiple: true,
    valueName: '[NAME=]DIR',
    description: 'A file-based catalog directory; NAME defaults to the folder name and may be NAMESPACE/NAME',
  },
  priority: {
    type: 'string',
    multiple: true,
    valueName: 'NAME=N',
    description: "A catalog's priority: higher is preferred for dependencies (default 0)",
  },
  subscription: {
    type: 'string',
    multiple: true,
    valueName: 'FILE',
    description: 'A Subscription YAML file; all Subscriptions resolve together in one namespace',
  },
  installed: {
    type: 'string',
    valueName: 'FILE',
    description:
      'A YAML list of installed CSVs with their catalog: - {name: etcdoperator.v0.9.2, catalog: community}',
  },
  output: { type: 'string', short: 'o', valueName: 'FORMAT', default: 'text', description: 'text or json' },
};

const inputHelp =
  'Catalogs are FBC directories. A catalog without a namespace takes the one its Subscriptions\n' +
  'name in spec.sourceNamespace, else theirs. Installed CSVs that no Subscription names stay as they are.';

function outputFormat(values: Values): OutputFormat {
  const o = str(values, 'output') ?? OutputFormat.Text;
  if (o !== OutputFormat.Text && o !== OutputFormat.JSON)
    throw new UsageError(`--output ${o}: expected text or json`);
  return o;
}

async function run(values: Values, ctx: CommandContext, explain: boolean): Promise<number> {
  const format = outputFormat(values);
  const input = await readInput(
    {
      catalogs: strs(values, 'catalog'),
      priorities: strs(values, 'priority'),
      subscriptions: strs(values, 'subscription'),
      ...(str(values, 'installed') ? { installed: str(values, 'installed') } : {}),
    },
    ctx.cwd,
  );
  // The resolver (and its CEL engine) load only for the commands that resolve.
  const { explainText, resolve } = await import('../../resolver/index.js');
  const result = resolve(input, { explain });
  if (format === OutputFormat.JSON)
    ctx.stdout.write(`${JSON.stringify(explain ? result : resolveJSON(result), null, 2)}\n`);
  else ctx.stdout.write(explain ? explainText(result) : planText(result));
  return result.ok ? 0 : 1;
}

/** The JSON `bosun resolve` prints: the install list, or the message and the explanation. */
export function resolveJSON(r: ResolutionResult): unknown {
  if (!r.ok) {
    return {
      ok: false,
      reason: r.reason,
      message: r.message,
      explanation: r.explanation,
      ...(r.problems ? { problems: r.problems } : {}),
    };
  }
  return {
    ok: true,
    install: r.steps.map((s) => ({
      package: s.package,
      bundle: s.bundle,
      version: s.version,
      catalog: s.catalog,
      channel: s.channel,
      replaces: s.replaces,
      reason: s.reason,
    })),
  };
}

function planText(r: ResolutionResult): string {
  if (!r.ok)
    return `Cannot resolve: ${escapeControls(r.message)}\nRun 'bosun explain' with the same flags for every candidate and why it was ruled out.\n`;
  if (r.steps.length === 0) return 'Nothing to install or upgrade.\n';
  return `${r.steps
    .map((s) => {
      const what = s.replaces ? `upgrade ${s.replaces} to ${s.bundle}` : `install ${s.bundle}`;
      const why = s.subscription ? `for subscription ${s.subscription}` : 'as a dependency';
      // One line per step: the names it quotes cannot start another.
      return escapeControls(
        `${what} (${s.version}) from channel ${s.channel} of catalog ${s.catalog}, ${why}`,
      );
    })
    .join('\n')}\n`;
}

export const resolveCommand: Command = {
  name: 'resolve',
  summary: 'Resolve Subscriptions against catalogs offline, exactly as the manager does',
  description:
    'Resolves Subscriptions against file-based catalogs, as the manager does, and prints the bundles\n' +
    'to install (dependencies first), or why there are none. Exits 1 when there is no answer.\n\n' +
    inputHelp,
  options,
  run: ({ values, ctx }) => run(values, ctx, false),
};

export const explainCommand: Command = {
  name: 'explain',
  summary: 'Explain in prose why Subscriptions resolve as they do, or why they cannot',
  description:
    'Resolves like `bosun resolve` and explains the outcome: for each Subscription and requirement,\n' +
    'the candidates (catalog, channel, bundle), which constraint ruled each out, and the smallest set\n' +
    'of constraints that conflict. With --output json, prints the whole result with its explanation.\n\n' +
    inputHelp,
  options,
  run: ({ values, ctx }) => run(values, ctx, true),
};
