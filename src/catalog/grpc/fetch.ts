/**
 * A catalog read from a registry server: `sourceType: grpc` with `spec.address`, the address of
 * an `opm serve` (or any server of operator-registry's `api.Registry`).
 *
 * Steps: parse the address (address.ts) → health check → ListPackages, then GetPackage of each →
 * ListBundles → GetBundle of each bundle whose manifests ListBundles left out → the answers made a
 * DeclarativeConfig (convert.ts) → checked as a catalog read from files is (the load schema and
 * validate.ts). The outcome is a value: the catalog, or a failure whose `kind` says what went
 * wrong and whose message names the address, the call and the cause.
 */
import type { DeclarativeConfig } from '../../apis/fbc.js';
import { escapeControls } from '../../util/terminal.js';
import { fail, formatProblem, ok, type Problem, type Result } from '../../util/result.js';
import { CatalogLimitEnv, maxCatalogFileBytes } from '../limits.js';
import { mapConcurrently } from '../load.js';
import { validateCatalog } from '../validate.js';
import { parseRegistryAddress } from './address.js';
import { type CallFailure, connectRegistry, type Received, RegistryCallError, Status } from './client.js';
import { bundlesToFetch, bundleKey, registryToConfig } from './convert.js';
import {
  HealthService,
  methodName,
  RegistryMethod,
  type RegistryBundle,
  ServingStatus,
  servingStatusName,
} from './wire.js';

const MiB = 2 ** 20;

export const RegistryFetchDefaults = {
  /** Each call's deadline. ListBundles of the 2021 corpus (130 MB) takes about 1.5 s on loopback. */
  timeoutMs: 30_000,
  /** The whole fetch's deadline. */
  totalTimeoutMs: 300_000,
  /**
   * One message: 64 MiB, the most a bundle may hold where Bosun reads one (BOSUN_BUNDLE_MAX_MIB's
   * default), since a Bundle message carries all its manifests. The 2021 corpus's largest
   * (redis-operator 0.5.0) is 1.8 MB; gRPC's own default, 4 MiB, refuses real bundles with large
   * CRDs.
   */
  maxMessageBytes: 64 * MiB,
  /**
   * Messages of all calls: 200,000, where the 2021 corpus takes 1,563 (a message per package, per
   * channel entry and per GetBundle), so an endless stream of empty messages ends within seconds.
   */
  maxMessages: 200_000,
  /** GetPackage and GetBundle calls in flight at once. */
  concurrency: 4,
} as const;

export interface RegistryFetchOptions {
  /** Ends the fetch, cancelling the calls in flight. */
  signal?: AbortSignal;
  timeoutMs?: number;
  totalTimeoutMs?: number;
  maxMessageBytes?: number;
  /**
   * All messages together. By default the limit of one catalog file or HTTP body
   * (BOSUN_CATALOG_MAX_FILE_MIB, 256 MiB): a registry's answers are the whole catalog.
   */
  maxTotalBytes?: number;
  maxMessages?: number;
  concurrency?: number;
}

export interface RegistryCatalog {
  config: DeclarativeConfig;
  /** Validation's warnings. */
  warnings: Problem[];
  received: Received;
}

/**
 * What failed. The CatalogSource condition reason follows from it: Address is OLM's
 * SpecInvalidError, InvalidCatalog is InvalidCatalog, every other kind is RegistryServerError.
 */
export const RegistryFailureKind = {
  /** spec.address is not host:port. */
  Address: 'Address',
  /** Nothing answers there, or the connection broke. */
  Unavailable: 'Unavailable',
  /** A call, or the whole fetch, ran past its deadline. */
  Deadline: 'Deadline',
  /** The health check says the server does not serve. */
  NotServing: 'NotServing',
  /** Something answers there, but not in gRPC (HTTP/2): a web server, another protocol. */
  NotGrpc: 'NotGrpc',
  /** A gRPC server, but not a registry: a method is not implemented. */
  Unimplemented: 'Unimplemented',
  /** A message, or all messages together, past the limits. */
  TooLarge: 'TooLarge',
  /** Any other failure of a call: not gRPC, a malformed message, a server error. */
  CallFailed: 'CallFailed',
  /** The answers are not a valid catalog, or contradict each other. */
  InvalidCatalog: 'InvalidCatalog',
  /** The caller's signal ended the fetch. */
  Aborted: 'Aborted',
} as const;
export type RegistryFailureKind = (typeof RegistryFailureKind)[keyof typeof RegistryFailureKind];

export interface RegistryFailure {
  kind: RegistryFailureKind;
  address: string;
  /** One line: what failed, naming the address. */
  message: string;
  /** For InvalidCatalog: every problem found, each naming its object. */
  problems: Problem[];
}

/** Problems a failure's message shows; the rest are counted. */
const shownProblems = 5;

export async function fetchRegistryCatalog(
  address: string,
  opts: RegistryFetchOptions = {},
): Promise<Result<RegistryCatalog, RegistryFailure>> {
  const where = `registry ${escapeControls(JSON.stringify(address).slice(1, -1))}`;
  const failure = (kind: RegistryFailureKind, message: string, problems: Problem[] = []) =>
    fail<RegistryFailure>({ kind, address, message: `${where}: ${message}`, problems });
  const parsed = parseRegistryAddress(address);
  if (!parsed.ok)
    return fail({ kind: RegistryFailureKind.Address, address, message: parsed.message, problems: [] });

  const maxTotalBytes = opts.maxTotalBytes ?? maxCatalogFileBytes();
  const limits = {
    callTimeoutMs: opts.timeoutMs ?? RegistryFetchDefaults.timeoutMs,
    deadline: Date.now() + (opts.totalTimeoutMs ?? RegistryFetchDefaults.totalTimeoutMs),
    maxMessageBytes: Math.min(opts.maxMessageBytes ?? RegistryFetchDefaults.maxMessageBytes, maxTotalBytes),
    maxTotalBytes,
    maxMessages: opts.maxMessages ?? RegistryFetchDefaults.maxMessages,
  };
  // The first failed call ends the others: the fetch has failed, nothing more is worth asking.
  const stop = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, stop.signal]) : stop.signal;
  const client = connectRegistry(parsed.value.target, limits, signal);
  const concurrency = opts.concurrency ?? RegistryFetchDefaults.concurrency;
  const all = <T, R>(items: T[], fn: (item: T) => Promise<R>) =>
    mapConcurrently(items, concurrency, (item) =>
      fn(item).catch((err: unknown) => {
        stop.abort();
        throw err;
      }),
    );
  try {
    const health = await client.check();
    if (health !== ServingStatus.Serving)
      return failure(
        RegistryFailureKind.NotServing,
        `the health check (grpc.health.v1.Health/Check of service "${HealthService}") answers ${servingStatusName(health)}, not SERVING`,
      );
    const listed = await client.listPackages();
    const packages = await all(listed, (name) => client.getPackage(name));
    const bundles = await client.listBundles();
    const asked = bundlesToFetch(bundles);
    const fetched = await all(asked, (req) => client.getBundle(req));
    // Kept by what was asked, so that an answer for another bundle is caught (convert.ts).
    const manifests = new Map<string, RegistryBundle>();
    asked.forEach((req, i) => manifests.set(bundleKey(req.pkgName, req.csvName), fetched[i]!));

    const { config, problems } = registryToConfig({ listed, packages, bundles, manifests });
    const validation = problems.length === 0 ? validateCatalog(config) : { errors: [], warnings: [] };
    problems.push(...validation.errors);
    if (problems.length > 0) {
      const shown = problems.slice(0, shownProblems).map(formatProblem).join('; ');
      const more = problems.length > shownProblems ? ` (and ${problems.length - shownProblems} more)` : '';
      return failure(
        RegistryFailureKind.InvalidCatalog,
        `what it serves is not a valid catalog: ${shown}${more}`,
        problems,
      );
    }
    return ok({ config, warnings: validation.warnings, received: { ...client.received } });
  } catch (err) {
    if (!(err instanceof RegistryCallError)) throw err;
    if (opts.signal?.aborted) return failure(RegistryFailureKind.Aborted, 'the fetch was cancelled');
    const [kind, message] = describeFailure(err.method, err.failure, parsed.value.host, limits);
    return failure(kind, message);
  } finally {
    client.close();
  }
}

/** What a failed call means for the user, as a kind and one line. */
function describeFailure(
  method: RegistryMethod,
  f: CallFailure,
  host: string,
  limits: { maxMessageBytes: number; maxTotalBytes: number },
): [RegistryFailureKind, string] {
  const call = methodName(method);
  if (f.code === 'aborted') return [RegistryFailureKind.Aborted, `${call}: the fetch was cancelled`];
  if (f.code === 'deadline')
    return [
      RegistryFailureKind.Deadline,
      f.whole
        ? `${call}: the fetch did not finish within its deadline (${seconds(f.ms)} left for this call)`
        : `${call}: no answer within ${seconds(f.ms)}, the deadline of each call`,
    ];
  if (f.code === 'budget')
    return [
      RegistryFailureKind.TooLarge,
      f.of === 'bytes'
        ? `${call}: the server sent more than ${mib(f.limit)} in all, the limit for one catalog (${CatalogLimitEnv.File} raises it, up to 500)`
        : `${call}: the server sent more than ${f.limit} messages in all, the limit for one catalog`,
    ];
  const details = serverText(f.details);
  switch (f.code) {
    case Status.UNAVAILABLE:
      // grpc-js's word for a peer whose bytes are not HTTP/2.
      if (/Protocol error/.test(details))
        return [
          RegistryFailureKind.NotGrpc,
          `${call}: something answers there, but not in gRPC over plain-text HTTP/2 (${details}); is it the registry server's port?`,
        ];
      return [
        RegistryFailureKind.Unavailable,
        `${call}: cannot reach a registry server there (${details}); is \`opm serve\` listening on ${host} at that port?`,
      ];
    case Status.UNIMPLEMENTED:
      return [
        RegistryFailureKind.Unimplemented,
        `${call}: the server answers gRPC but does not implement ${method.slice(1)} (${details}), so it is not a registry server such as \`opm serve\``,
      ];
    case Status.RESOURCE_EXHAUSTED:
      return [
        RegistryFailureKind.TooLarge,
        `${call}: a message is larger than the limit of ${mib(limits.maxMessageBytes)} for one message (${details})`,
      ];
    default:
      return [RegistryFailureKind.CallFailed, `${call}: ${Status[f.code] ?? `status ${f.code}`}: ${details}`];
  }
}

const seconds = (ms: number) => `${Math.max(0, ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
const mib = (n: number) => `${(n / MiB).toFixed(0)} MiB`;

/** Text the server chose, made one inert line of bounded length. */
function serverText(text: string): string {
  // grpc-js ends a connection failure with "Resolution note: " and nothing after it.
  const line = escapeControls(text.replace(/\.? Resolution note: ?$/, ''));
  return line.length > 300 ? `${line.slice(0, 300)}...` : line;
}
