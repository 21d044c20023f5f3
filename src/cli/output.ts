/**
 * The bosun command's output streams, whose text goes through escapeControls
 * (util/terminal.ts): names and messages from catalogs, bundles and clusters cannot act on the
 * terminal. What Bosun writes on purpose (its own cursor movements, rendered catalogs to a file or
 * a pipe) says so by taking the stream underneath (`rawStream`, `dataStream`).
 */
import { StringDecoder } from 'node:string_decoder';
import { escapeControls } from '../util/terminal.js';

/** The streams terminalSafe wrapped, by wrapper, for the output that must stay as it is. */
const unwrapped = new WeakMap<object, NodeJS.WritableStream>();

/**
 * `stream`, but every text written to it has its control characters escaped (layout kept). Bytes
 * are read as UTF-8 first, a character split between two writes included.
 */
export function terminalSafe<S extends NodeJS.WritableStream>(stream: S): S {
  const decoder = new StringDecoder('utf8');
  const write = (chunk: unknown, ...rest: unknown[]): boolean => {
    const text =
      typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? decoder.write(chunk) : String(chunk);
    return (stream.write as (...args: unknown[]) => boolean)(
      escapeControls(text, { keepLayout: true }),
      ...rest,
    );
  };
  const safe = new Proxy(stream, {
    get(target, key) {
      if (key === 'write') return write;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  unwrapped.set(safe, stream);
  return safe;
}

/**
 * The stream itself, for what Bosun writes on purpose: its own cursor movements on a terminal
 * (a progress line rewritten in place). Never for text that came from input.
 */
export function rawStream<S extends NodeJS.WritableStream>(stream: S): S {
  return (unwrapped.get(stream) as S | undefined) ?? stream;
}

/**
 * Where to write data a command produces (a rendered catalog): as it is when it goes to a file or
 * another program, whose bytes must be exactly the data's; escaped on a terminal, where a person
 * reads it and a control character would act.
 */
export function dataStream<S extends NodeJS.WritableStream & { isTTY?: boolean }>(stream: S): S {
  return stream.isTTY === true ? stream : rawStream(stream);
}
