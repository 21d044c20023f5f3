/**
 * blang/semver's own answers, from tools/blang-semver (a small Go program over the library OLM
 * uses), built and run through test/support/go-tool.ts.
 */
import { type GoProgram, GoTool, goTool } from '../../support/go-tool.js';

export interface BlangRequest {
  op: 'parse' | 'tolerant' | 'compare' | 'range';
  text?: string;
  a?: string;
  b?: string;
  versions?: string[];
}

export interface BlangAnswer {
  ok: boolean;
  error?: string;
  value?: string;
  cmp?: number;
  /** Per version: "true", "false", "panic" (blang's range function panicked) or "invalid". */
  tests?: string[];
}

/** The built tool's path, or why it cannot be built here. */
export const blangTool = (): Promise<GoProgram> => goTool('blang-semver');

/** A running tool: one request, one answer, in order. */
export class Blang extends GoTool<BlangRequest, BlangAnswer> {}
