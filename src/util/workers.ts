/**
 * A small pool of worker threads for CPU-bound parsing (catalog import and load): JavaScript
 * parses YAML on one core, so large inputs are spread over a few workers. Each worker handles
 * one request at a time and gets the next as soon as it answers; answers come back in input
 * order.
 */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/**
 * How to start a worker running the module `file` beside `here` (a caller's `import.meta.url`),
 * or undefined where that cannot run: compiled JavaScript always can; TypeScript sources only
 * under tsx (the benchmarks), whose loader the worker then registers first. Under vitest the
 * work stays in the calling thread. `options` (e.g. `resourceLimits`) are given to each worker.
 */
export function workerStarter(
  here: string,
  file: string,
  options: Omit<WorkerOptions, 'eval'> = {},
): (() => Worker) | undefined {
  if (here.endsWith('.js')) return () => new Worker(new URL(`./${file}.js`, here), options);
  if (here.endsWith('.ts') && process.execArgv.some((a) => a.includes('tsx'))) {
    const api = import.meta.resolve('tsx/esm/api');
    const worker = new URL(`./${file}.ts`, here).href;
    const boot = `import(${JSON.stringify(api)}).then((m) => { m.register(); return import(${JSON.stringify(worker)}); });`;
    return () => new Worker(boot, { ...options, eval: true });
  }
  return undefined;
}

/** What every worker answers: the request's id, and either its result or an error's text. */
export type WorkerAnswer<R> = { id: number; error?: undefined } & R;
export interface WorkerFailure {
  id: number;
  error: string;
}

/**
 * Sends `requests[i]` (with `id: i`) to `n` workers and returns their answers in request order.
 * `onAnswer` sees each answer as it arrives (for progress). The first failure rejects, naming
 * what `describe` says the request was; every worker is terminated either way.
 */
export async function runInWorkers<Q extends object, R extends object>(
  requests: Q[],
  n: number,
  start: () => Worker,
  describe: (request: Q) => string,
  onAnswer?: (answer: R & { id: number }) => void,
): Promise<(R & { id: number })[]> {
  const out: (R & { id: number })[] = new Array(requests.length);
  const workers = Array.from({ length: Math.min(n, requests.length) }, start);
  let next = 0;
  try {
    await Promise.all(
      workers.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            const send = () => {
              if (next >= requests.length) return resolve();
              const id = next++;
              w.postMessage({ ...requests[id]!, id });
            };
            w.on('message', (answer: WorkerAnswer<R> | WorkerFailure) => {
              if (answer.error !== undefined) {
                reject(new Error(`${describe(requests[answer.id]!)} failed: ${answer.error}`));
                return;
              }
              out[answer.id] = answer;
              onAnswer?.(answer);
              send();
            });
            w.on('error', reject);
            send();
          }),
      ),
    );
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return out;
}

/** The worker side: answers each request with `handle`'s result, or with the error it threw. */
export function serveRequests<Q, R extends object>(
  port: import('node:worker_threads').MessagePort,
  handle: (request: Q & { id: number }) => Promise<{ answer: R }>,
): void {
  port.on('message', async (request: Q & { id: number }) => {
    try {
      const { answer } = await handle(request);
      port.postMessage({ ...answer, id: request.id });
    } catch (err) {
      port.postMessage({
        id: request.id,
        error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      } satisfies WorkerFailure);
    }
  });
}

/**
 * Workers that take requests as they come (where runInWorkers takes a list known at once): at
 * most `size` run, each started when a request finds none idle, each handling one request at a
 * time, in the order given. A worker that dies (out of memory, an uncaught error) fails its
 * request and every one after, and the pool takes no more; `close` terminates them all.
 */
export class WorkerPool<Q extends object, R extends object> {
  private readonly idle: Worker[] = [];
  private readonly busy = new Map<Worker, { reject: (err: Error) => void }>();
  private readonly queue: {
    request: Q;
    resolve: (answer: R) => void;
    reject: (err: Error) => void;
  }[] = [];
  private failure: Error | undefined;
  private nextId = 0;

  constructor(
    private readonly start: () => Worker,
    private readonly size: number,
    private readonly describe: (request: Q) => string,
  ) {}

  run(request: Q): Promise<R> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.dispatch();
    });
  }

  async close(): Promise<void> {
    this.fail(new Error('the worker pool was closed'));
    const all = [...this.idle, ...this.busy.keys()];
    this.idle.length = 0;
    this.busy.clear();
    await Promise.all(all.map((w) => w.terminate()));
  }

  private dispatch(): void {
    while (this.queue.length > 0 && !this.failure) {
      let worker = this.idle.pop();
      if (!worker) {
        if (this.busy.size >= this.size) return;
        worker = this.spawn();
      }
      const job = this.queue.shift()!;
      const id = this.nextId++;
      const w = worker;
      const onMessage = (answer: WorkerAnswer<R> | WorkerFailure) => {
        if (answer.id !== id) return;
        w.off('message', onMessage);
        this.busy.delete(w);
        this.idle.push(w);
        if (answer.error !== undefined)
          job.reject(new Error(`${this.describe(job.request)} failed: ${answer.error}`));
        else job.resolve(answer);
        this.dispatch();
      };
      w.on('message', onMessage);
      this.busy.set(w, { reject: job.reject });
      w.postMessage({ ...job.request, id });
    }
  }

  private spawn(): Worker {
    const w = this.start();
    const died = (err: Error) => {
      this.busy.get(w)?.reject(err);
      this.busy.delete(w);
      const idle = this.idle.indexOf(w);
      if (idle !== -1) this.idle.splice(idle, 1);
      this.fail(err);
    };
    w.on('error', died);
    // A worker that exits on its own (process.exit in it) without an error would leave its
    // request waiting for ever; one that close() terminated is no longer busy by then.
    w.on('exit', (code: number) => {
      if (this.busy.has(w)) died(new Error(`the worker stopped (exit code ${code}) before it answered`));
    });
    return w;
  }

  /** Fails every queued request with `err`; no request is taken after. */
  private fail(err: Error): void {
    this.failure ??= err;
    for (const job of this.queue.splice(0)) job.reject(this.failure);
  }
}
