/** Reading the FBC JSON that opm and Bosun print, for tests that compare the two. */

export type Doc = Record<string, unknown> & { schema?: string };

/** opm's and Bosun's JSON output: documents one after another, each starting a line with `{`. */
export function documents(text: string): Doc[] {
  return text
    .split(/\n(?=\{)/)
    .filter((d) => d.trim() !== '')
    .map((d) => JSON.parse(d) as Doc);
}
