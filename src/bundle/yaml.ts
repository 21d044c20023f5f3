/**
 * The project's one document codec: every catalog file, bundle manifest, inline bundle object and
 * CRD file is decoded here, and every YAML Bosun writes is written here.
 *
 * Decoding sniffs the content as `opm` and Kubernetes' YAML-or-JSON decoder do: a stream whose
 * first non-blank character is `{` or `[` is JSON (documents one after another), read with
 * JSON.parse, and invalid JSON is an error there, not a second try as YAML. Anything else is YAML,
 * read with js-yaml's core schema, which resolves scalars the way Kubernetes' YAML-to-JSON does
 * for manifests: timestamps stay strings, duplicate keys are errors. Plain block YAML, which most
 * catalogs and manifests are, is read by yaml-block.ts instead, with the same outcome in about
 * half the time (`npm run bench -- catalog`: catalog.decode.yaml against catalog.decode.yaml.jsyaml).
 *
 * Every document is held to DocumentLimits (document-limits.ts): its size before it is parsed,
 * its nesting, and what its aliases expand to, each refused with a problem naming the file and
 * the document, never an exception, a hang or a runaway allocation.
 */
import jsyaml from 'js-yaml';
import type { Problem } from '../util/result.js';
import { DocumentLimits, documentTooLarge, largestYamlDocument, unalias } from './document-limits.js';
import { position } from './json-stream.js';
import { parseJsonStream } from './json-stream.js';
import { readBlockYaml } from './yaml-block.js';

export interface ParsedDoc {
  /** Index of the document in the stream, counting empty documents, so messages can say "document 3". */
  index: number;
  value: unknown;
}

export type ParseOutcome = { ok: true; docs: ParsedDoc[] } | { ok: false; problem: Problem };

/**
 * Parses every document of a JSON or YAML stream (see above for which is which). Empty YAML
 * documents (a leading `---`, comment-only parts) are skipped, as `kubectl` and `opm` skip them.
 * A syntax error fails the whole file: what follows an error cannot be trusted.
 */
export function parseYamlStream(text: string, file: string, opts: YamlOptions = {}): ParseOutcome {
  const source = stripBom(text);
  if (isJsonText(source)) {
    const json = parseJsonStream(source, file);
    return json.ok ? { ok: true, docs: json.docs.map((value, index) => ({ index, value })) } : json;
  }
  if (source.length > DocumentLimits.maxDocumentChars) {
    const largest = largestYamlDocument(source);
    if (largest.chars > DocumentLimits.maxDocumentChars) {
      const where = `the document at ${position(source, largest.start)}`;
      return { ok: false, problem: { file, message: documentTooLarge(largest.chars, where) } };
    }
  }
  // Most catalogs and manifests are plain block YAML, which a faster reader reads the same way.
  // It reads no anchors or aliases and nothing deeper than js-yaml would.
  const fast = readBlockYaml(source);
  if (fast) return { ok: true, docs: fast };
  // Only a document with an anchor (`&`) can have aliases to expand.
  const mayAlias = source.includes('&');
  const load = (json: boolean): ParsedDoc[] => {
    const docs: ParsedDoc[] = [];
    let index = 0;
    jsyaml.loadAll(
      source,
      (value) => {
        if (value !== null && value !== undefined) {
          const tree = mayAlias ? unalias(value, `document ${index + 1}`) : { ok: true as const, value };
          if (!tree.ok) throw new LimitExceeded(tree.message);
          docs.push({ index, value: tree.value });
        }
        index++;
      },
      loadOptions(file, json),
    );
    return docs;
  };
  try {
    return { ok: true, docs: load(false) };
  } catch (err) {
    if (err instanceof LimitExceeded) return { ok: false, problem: { file, message: err.message } };
    const problem = { file, message: describeYamlError(err) };
    if (
      opts.onDuplicateKey &&
      err instanceof jsyaml.YAMLException &&
      /duplicated mapping key/.test(err.reason)
    ) {
      // Kubernetes' YAML decoder keeps the last value of a repeated key; so does json mode.
      try {
        const docs = load(true);
        opts.onDuplicateKey({
          ...problem,
          message: `${problem.message}; the last value was used, as Kubernetes does`,
        });
        return { ok: true, docs };
      } catch (again) {
        const message = again instanceof LimitExceeded ? again.message : describeYamlError(again);
        return { ok: false, problem: { file, message } };
      }
    }
    return { ok: false, problem };
  }
}

/**
 * js-yaml's options: the core schema, and its own depth limit (which its typings do not declare)
 * set to the codec's, which is also its default.
 */
function loadOptions(file: string, json: boolean): jsyaml.LoadOptions {
  const opts: jsyaml.LoadOptions & { maxDepth: number } = {
    schema: jsyaml.CORE_SCHEMA,
    filename: file,
    json,
    maxDepth: DocumentLimits.maxDepth,
  };
  return opts;
}

/** A document past DocumentLimits, found while js-yaml reads the stream. */
class LimitExceeded extends Error {}

export interface YamlOptions {
  /**
   * Accept repeated keys (last value wins, as Kubernetes reads manifests) and report each file
   * that has them here, instead of failing. Used when importing published operators, whose
   * manifests Kubernetes accepted; Bosun's own inputs are held to the stricter rule.
   */
  onDuplicateKey?: (p: Problem) => void;
}

/** Parses a file that must hold exactly one YAML (or JSON) document. */
export function parseYamlOne(
  text: string,
  file: string,
): { ok: true; value: unknown } | { ok: false; problem: Problem } {
  const parsed = parseYamlStream(text, file);
  if (!parsed.ok) return parsed;
  if (parsed.docs.length === 0) return { ok: false, problem: { file, message: 'the file is empty' } };
  if (parsed.docs.length > 1) {
    return {
      ok: false,
      problem: { file, message: `expected one YAML document, found ${parsed.docs.length}` },
    };
  }
  return { ok: true, value: parsed.docs[0]!.value };
}

/** True when a stream is to be read as JSON: its first non-blank character opens an object or array. */
export function isJsonText(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) continue;
    return c === 0x7b || c === 0x5b; // `{` or `[`
  }
  return false;
}

export function stripBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function describeYamlError(err: unknown): string {
  if (err instanceof jsyaml.YAMLException) {
    const where = err.mark ? `line ${err.mark.line + 1}, column ${err.mark.column + 1}: ` : '';
    return `invalid YAML: ${where}${err.reason}`;
  }
  return `invalid YAML: ${err instanceof Error ? err.message : String(err)}`;
}

/**
 * Serialises a value as YAML the way `opm` writes it: block style, no line folding, no anchors
 * (objects used twice are written twice), keys sorted unless `sortKeys` is false (then in the
 * objects' own order, for files people read, such as generated CRDs).
 */
export function toYaml(value: unknown, opts: { sortKeys?: boolean } = {}): string {
  return jsyaml.dump(value, {
    sortKeys: opts.sortKeys ?? true,
    lineWidth: -1,
    noRefs: true,
    noArrayIndent: true,
    skipInvalid: true,
  });
}

/** Kept under this name for the many readers of decoded documents (see util/record.ts). */
export { isRecord as isObject } from '../util/record.js';
