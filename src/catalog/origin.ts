/**
 * Where each loaded catalog document came from, kept beside the documents rather than in them so
 * the FBC types stay exactly OLM's. Validation and diff use it to name the file in messages;
 * documents built in memory simply have no origin.
 */

export interface Origin {
  file: string;
  /** Index of the document in its file. */
  doc: number;
}

const origins = new WeakMap<object, Origin>();

export function setOrigin(doc: object, origin: Origin): void {
  origins.set(doc, origin);
}

export function originOf(doc: object): Origin | undefined {
  return origins.get(doc);
}

export function fileOf(doc: object): string | undefined {
  return origins.get(doc)?.file;
}
