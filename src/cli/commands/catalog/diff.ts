import { type Change, diffCatalogs } from '../../../catalog/diff.js';
import { formatProblem } from '../../../util/result.js';
import { escapeControls } from '../../../util/terminal.js';
import { bool, type Command } from '../../command.js';
import { renderInput } from './inputs.js';
import { argPath, displayProblem, OutputMode, outputMode, outputOption, plural } from './report.js';

export const diffCommand: Command = {
  name: 'diff',
  summary: 'Compare two catalogs and flag changes that break existing installs',
  usage: '<old> <new>',
  description:
    'Lists removed and added packages, channels and bundles, changed upgrade edges, changed heads and\n' +
    'default channels, and stranded versions (in a channel before, with no upgrade path to its head\n' +
    'now). Changes that leave someone with an installed version without upgrades are BREAKING.',
  args: { min: 2, max: 2 },
  options: {
    'fail-on-breaking': { type: 'boolean', description: 'Exit 1 when any change is breaking' },
    ...outputOption,
  },
  run: async ({ values, positionals, ctx }) => {
    const mode = outputMode(values);
    const [oldIn, newIn] = await Promise.all(positionals.map((p) => renderInput(argPath(ctx, p))));
    const errors = [...oldIn!.errors, ...newIn!.errors];
    if (errors.length) {
      for (const e of errors) ctx.stderr.write(`error: ${formatProblem(displayProblem(ctx, e))}\n`);
      return 1;
    }
    const changes = diffCatalogs(oldIn!.config, newIn!.config);
    const breaking = changes.filter((c) => c.breaking).length;
    if (mode === OutputMode.JSON) {
      ctx.stdout.write(`${JSON.stringify({ breaking, changes }, null, 2)}\n`);
    } else {
      for (const c of changes) ctx.stdout.write(`${line(c)}\n`);
      ctx.stdout.write(`${plural(changes.length, 'change')}, ${breaking} breaking\n`);
    }
    return breaking && bool(values, 'fail-on-breaking') ? 1 : 0;
  },
};

/** One line per change: the names it quotes cannot start another. */
function line(c: Change): string {
  return `${c.breaking ? 'BREAKING ' : '         '}${escapeControls(`${c.package}: ${c.message}`)}`;
}
