/**
 * gRPC servers that are not `opm serve`, for the failures opm never shows: a health check that
 * says NOT_SERVING, a server without the Registry service, one that never answers, one that
 * answers too much or contradicts itself. Each is a real grpc-js server on a free port of
 * 127.0.0.1, speaking the wire format of src/catalog/grpc/wire.ts.
 */
import {
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from '@grpc/grpc-js';
import { type Codec, RegistryMethod, wire } from '../../src/catalog/grpc/wire.js';

type Handler = UntypedServiceImplementation[string];

/**
 * A gRPC server of the methods given (the others answer UNIMPLEMENTED), on a free port of
 * 127.0.0.1: the servers opm is not, for the failures opm never shows.
 */
export async function grpcServer(
  methods: Record<string, Handler>,
): Promise<{ address: string; stop(): Promise<void> }> {
  const server = new Server();
  const service = Object.fromEntries(
    Object.keys(methods).map((path) => {
      const streaming = path === RegistryMethod.ListPackages || path === RegistryMethod.ListBundles;
      return [
        path,
        {
          path,
          requestStream: false,
          responseStream: streaming,
          requestSerialize: (v: Buffer) => v,
          requestDeserialize: (b: Buffer) => b,
          responseSerialize: (v: Buffer) => v,
          responseDeserialize: (b: Buffer) => b,
        },
      ];
    }),
  );
  server.addService(service, methods);
  const port = await new Promise<number>((done, fail) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
      err ? fail(err) : done(p),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    // Forced: a hostile handler never ends its call, and the test is over.
    stop: async () => server.forceShutdown(),
  };
}

/** A unary handler over raw bytes, with the request and answer encoded by our own codecs. */
export function unary<Req, Res>(req: Codec<Req>, res: Codec<Res>, answer: (r: Req) => Res): Handler {
  return (call: ServerUnaryCall<Buffer, Buffer>, cb: sendUnaryData<Buffer>) =>
    cb(null, res.encode(answer(req.decode(call.request))));
}

export function stream<Req, Res>(req: Codec<Req>, res: Codec<Res>, answer: (r: Req) => Res[]): Handler {
  return (call: ServerWritableStream<Buffer, Buffer>) => {
    for (const m of answer(req.decode(call.request))) call.write(res.encode(m));
    call.end();
  };
}

export const serving = unary(wire.healthCheckRequest, wire.healthCheckResponse, () => ({ status: 1 }));

/**
 * A stream that never ends by itself: `message` written again and again as fast as the client
 * takes them, until the client cancels. `sent` counts what went out.
 */
export function endless(message: Buffer, sent: { messages: number; cancelled: boolean }): Handler {
  return (call: ServerWritableStream<Buffer, Buffer>) => {
    call.on('cancelled', () => (sent.cancelled = true));
    const write = () => {
      while (!call.cancelled) {
        sent.messages++;
        if (!call.write(message)) return void call.once('drain', write);
      }
    };
    write();
  };
}

/** A stream that sends `message` every `everyMs`, forever: each on time, never done. */
export function drip(message: Buffer, everyMs: number): Handler {
  return (call: ServerWritableStream<Buffer, Buffer>) => {
    const timer = setInterval(() => (call.cancelled ? clearInterval(timer) : call.write(message)), everyMs);
    call.on('cancelled', () => clearInterval(timer));
  };
}

/** A unary method that fails with `code` and `details` of the server's choosing. */
export function failing(code: number, details: string): Handler {
  return (_call: ServerUnaryCall<Buffer, Buffer>, cb: sendUnaryData<Buffer>) => cb({ code, details }, null);
}

/** A unary method answering bytes of the server's choosing, whatever they decode to. */
export function raw(bytes: Buffer): Handler {
  return (_call: ServerUnaryCall<Buffer, Buffer>, cb: sendUnaryData<Buffer>) => cb(null, bytes);
}
