import { DefaultGlobalNamespace } from '../../../manager/defaults.js';
import { startCatalogServer } from '../../../server/catalog-http.js';
import { parseAddress } from '../../../server/http.js';
import { UsageError, UserError } from '../../../util/errors.js';
import { formatProblem } from '../../../util/result.js';
import { type Command, str } from '../../command.js';
import { untilSignal } from '../operator.js';
import { detectInput, InputKind } from './inputs.js';
import { argPath, displayPath, displayProblem, plural } from './report.js';

export const DefaultServeAddress = '127.0.0.1:8080';

export const serveCommand: Command = {
  name: 'serve',
  summary: 'Serve a catalog directory over HTTP for a CatalogSource of sourceType http, and browse it',
  usage: '<catalog-dir>',
  description:
    'Validates the catalog (as `bosun catalog validate` does; an invalid one is refused and nothing is\n' +
    'served), then serves it at / as `bosun catalog render <dir> -o json` prints it, until Ctrl-C or\n' +
    'SIGTERM. The first line printed is the URL to put in the CatalogSource:\n' +
    '  spec: {sourceType: http, address: http://HOST:PORT/}\n' +
    'Responses carry a strong ETag and answer If-None-Match with 304 Not Modified. The directory is\n' +
    'read again when its files change (checked on each request), so `bosun catalog publish` into it\n' +
    'is served without a restart; a change that makes it invalid is logged on stderr and the last\n' +
    'valid catalog is served on.\n' +
    'The same URL opened in a browser shows the web catalog: every package with search and filters,\n' +
    'its description, channels and upgrade graph, and what to kubectl apply to install it.',
  args: { min: 1, max: 1 },
  options: {
    addr: {
      type: 'string',
      valueName: 'HOST:PORT',
      default: DefaultServeAddress,
      description: 'Where to listen; port 0 picks a free port (the URL printed shows it)',
    },
  },
  run: async ({ values, positionals, ctx }) => {
    const addr = str(values, 'addr') ?? DefaultServeAddress;
    let host: string;
    let port: number;
    try {
      ({ host, port } = parseAddress(addr));
    } catch {
      throw new UsageError(`--addr: "${addr}" is not HOST:PORT (e.g. ${DefaultServeAddress})`);
    }
    const dir = argPath(ctx, positionals[0]!);
    const kind = await detectInput(dir);
    if (kind !== InputKind.CatalogDir) {
      const what = typeof kind === 'string' ? `a ${kind}` : kind.error;
      throw new UsageError(`${positionals[0]}: ${what}, not a catalog directory`);
    }
    const problemLine = (level: string) => (p: Parameters<typeof formatProblem>[0]) =>
      ctx.stderr.write(`${level}: ${formatProblem(displayProblem(ctx, p))}\n`);
    let started;
    try {
      started = await startCatalogServer({
        dir,
        host,
        port,
        catalogNamespace: DefaultGlobalNamespace,
        onReload: (s) =>
          ctx.stderr.write(
            `reloaded ${displayPath(ctx, dir)}: ${plural(s.packages, 'package')}, ${plural(s.bundles, 'bundle')}, ETag ${s.etag}\n`,
          ),
        onInvalid: (problems) => {
          problems.forEach(problemLine('error'));
          ctx.stderr.write(
            `${displayPath(ctx, dir)} is no longer a valid catalog; still serving the last valid one\n`,
          );
        },
      });
    } catch (err) {
      throw new UserError(`cannot listen on ${addr}: ${(err as Error).message}`, 1, { cause: err });
    }
    if (!started.ok) {
      started.errors.forEach(problemLine('error'));
      ctx.stderr.write(`invalid catalog ${displayPath(ctx, dir)}: nothing served\n`);
      return 1;
    }
    const server = started.value;
    ctx.stdout.write(`${server.url}\n`);
    server.initial.warnings.forEach(problemLine('warning'));
    ctx.stderr.write(
      `serving ${displayPath(ctx, dir)} (${plural(server.initial.packages, 'package')}, ${plural(server.initial.bundles, 'bundle')}); use the URL above as a CatalogSource's spec.address (sourceType http), or open it in a browser to browse the catalog; Ctrl-C stops\n`,
    );
    await untilSignal();
    await server.close();
    return 0;
  },
};
