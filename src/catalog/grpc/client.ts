/**
 * A connection to a registry server (`opm serve`) and the calls Bosun makes on it, as OLM's
 * registry client makes them (operator-registry pkg/client): plain-text HTTP/2 (registry pods
 * serve no TLS), the health check, ListPackages and GetPackage, ListBundles and GetBundle.
 *
 * What a server can make Bosun spend is bounded, whatever it sends:
 * - time: every call has a deadline (`callTimeoutMs`, and never past the fetch's own deadline),
 *   and an abort signal cancels whatever is in flight;
 * - one message: at most `maxMessageBytes`, which gRPC checks from the message's length prefix
 *   before it buffers the message (its default cap is 4 MiB, too small for large bundles);
 * - all messages together: at most `maxTotalBytes` bytes and `maxMessages` messages, so an
 *   endless stream ends, of large messages or of empty ones.
 * Failures are RegistryCallErrors naming the method and what went wrong; fetch.ts words them.
 */
import { Client, credentials, Metadata, status as Status, type ServiceError } from '@grpc/grpc-js';
import {
  type Codec,
  type GetBundleRequest,
  HealthService,
  type RegistryBundle,
  RegistryMethod,
  type RegistryPackage,
  wire,
} from './wire.js';

export { Status };

export interface RegistryCallLimits {
  /** Each call's deadline, in milliseconds. */
  callTimeoutMs: number;
  /** No call runs past this time (epoch milliseconds): the deadline of the whole fetch. */
  deadline: number;
  maxMessageBytes: number;
  maxTotalBytes: number;
  /** Messages of all calls together: empty messages cost a server nothing to send. */
  maxMessages: number;
}

/** What the server sent, counted as it arrived. */
export interface Received {
  /** Bytes of messages, each with gRPC's 5-byte frame header. */
  bytes: number;
  messages: number;
  calls: number;
}

/** Why a call failed: a gRPC status code, or one of ours. */
export type CallFailure =
  | { code: Status; details: string }
  | { code: 'budget'; of: 'bytes' | 'messages'; limit: number }
  | { code: 'aborted' }
  | { code: 'deadline'; whole: boolean; ms: number };

export class RegistryCallError extends Error {
  constructor(
    readonly method: RegistryMethod,
    readonly failure: CallFailure,
  ) {
    super(`${method}: ${JSON.stringify(failure)}`);
    this.name = 'RegistryCallError';
  }
}

export interface RegistryClient {
  /** The health check's serving status (grpc.health.v1: 1 is SERVING). */
  check(): Promise<number>;
  listPackages(): Promise<string[]>;
  getPackage(name: string): Promise<RegistryPackage>;
  listBundles(): Promise<RegistryBundle[]>;
  getBundle(request: GetBundleRequest): Promise<RegistryBundle>;
  readonly received: Readonly<Received>;
  close(): void;
}

/** gRPC frames each message with a flag byte and a 4-byte length. */
const FrameBytes = 5;

/** Opens a channel to `target` (address.ts makes it); nothing is sent until the first call. */
export function connectRegistry(
  target: string,
  limits: RegistryCallLimits,
  signal?: AbortSignal,
): RegistryClient {
  const client = new Client(target, credentials.createInsecure(), {
    'grpc.max_receive_message_length': limits.maxMessageBytes,
    // A DNS TXT record could otherwise hand the channel a service config (load balancing,
    // retries): how Bosun connects is decided here, not by whoever controls the DNS zone.
    'grpc.service_config_disable_resolution': 1,
  });
  const received: Received = { bytes: 0, messages: 0, calls: 0 };
  const inFlight = new Set<{ cancel(): void }>();
  const onAbort = () => {
    for (const call of inFlight) call.cancel();
  };
  signal?.addEventListener('abort', onAbort);

  /** The deadline of a call starting now, and whether it is the whole fetch's. */
  const deadlineNow = () => {
    const own = Date.now() + limits.callTimeoutMs;
    return own <= limits.deadline ? { at: own, whole: false } : { at: limits.deadline, whole: true };
  };

  /**
   * A deserializer that counts what arrives first: past the budget it records the failure and
   * throws, which ends the call (gRPC reports a parse error; `failed` says what it really was).
   */
  const counted =
    <T>(codec: Codec<T>, failed: { why?: CallFailure }) =>
    (bytes: Buffer) => {
      received.bytes += bytes.length + FrameBytes;
      received.messages += 1;
      if (received.bytes > limits.maxTotalBytes)
        failed.why = { code: 'budget', of: 'bytes', limit: limits.maxTotalBytes };
      else if (received.messages > limits.maxMessages)
        failed.why = { code: 'budget', of: 'messages', limit: limits.maxMessages };
      if (failed.why) throw new Error('over the budget');
      return codec.decode(bytes);
    };

  const failureOf = (
    err: ServiceError,
    failed: { why?: CallFailure },
    deadline: { at: number; whole: boolean },
    started: number,
  ): CallFailure => {
    if (failed.why) return failed.why;
    if (signal?.aborted) return { code: 'aborted' };
    if (err.code === Status.DEADLINE_EXCEEDED)
      return { code: 'deadline', whole: deadline.whole, ms: deadline.at - started };
    return { code: err.code, details: err.details ?? err.message };
  };

  const unary = <Req, Res>(method: RegistryMethod, req: Codec<Req>, res: Codec<Res>, argument: Req) =>
    new Promise<Res>((resolve, reject) => {
      if (signal?.aborted) return reject(new RegistryCallError(method, { code: 'aborted' }));
      received.calls += 1;
      const failed: { why?: CallFailure } = {};
      const started = Date.now();
      const deadline = deadlineNow();
      const call = client.makeUnaryRequest(
        method,
        (v: Req) => req.encode(v),
        counted(res, failed),
        argument,
        new Metadata(),
        { deadline: deadline.at },
        (err, value) => {
          inFlight.delete(call);
          if (err) reject(new RegistryCallError(method, failureOf(err, failed, deadline, started)));
          else resolve(value!);
        },
      );
      inFlight.add(call);
    });

  const stream = <Req, Res>(method: RegistryMethod, req: Codec<Req>, res: Codec<Res>, argument: Req) =>
    new Promise<Res[]>((resolve, reject) => {
      if (signal?.aborted) return reject(new RegistryCallError(method, { code: 'aborted' }));
      received.calls += 1;
      const failed: { why?: CallFailure } = {};
      const started = Date.now();
      const deadline = deadlineNow();
      const out: Res[] = [];
      const call = client.makeServerStreamRequest(
        method,
        (v: Req) => req.encode(v),
        counted(res, failed),
        argument,
        new Metadata(),
        { deadline: deadline.at },
      );
      inFlight.add(call);
      call.on('data', (m: Res) => out.push(m));
      call.on('error', (err: ServiceError) => {
        inFlight.delete(call);
        reject(new RegistryCallError(method, failureOf(err, failed, deadline, started)));
      });
      call.on('end', () => {
        inFlight.delete(call);
        resolve(out);
      });
    });

  return {
    received,
    check: async () =>
      (
        await unary(RegistryMethod.HealthCheck, wire.healthCheckRequest, wire.healthCheckResponse, {
          service: HealthService,
        })
      ).status,
    listPackages: async () =>
      (await stream(RegistryMethod.ListPackages, wire.listPackagesRequest, wire.packageName, {})).map(
        (p) => p.name,
      ),
    getPackage: (name) => unary(RegistryMethod.GetPackage, wire.getPackageRequest, wire.package, { name }),
    listBundles: () => stream(RegistryMethod.ListBundles, wire.listBundlesRequest, wire.bundle, {}),
    getBundle: (request) => unary(RegistryMethod.GetBundle, wire.getBundleRequest, wire.bundle, request),
    close() {
      signal?.removeEventListener('abort', onAbort);
      onAbort();
      client.close();
    },
  };
}
