/**
 * The oci benchmark names its figures by what it measured: without BOSUN_CORPUS_DIR (or with one
 * that does not exist) it reads the sample catalog, and its manager RSS figure then says so
 * instead of passing for the corpus's.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { catalogDir, managerRssFigure } from '../../bench/oci.bench.js';

const saved = process.env.BOSUN_CORPUS_DIR;
afterEach(() => {
  if (saved === undefined) delete process.env.BOSUN_CORPUS_DIR;
  else process.env.BOSUN_CORPUS_DIR = saved;
});

describe('the oci benchmark’s figure names', () => {
  it.each([
    ['unset', undefined],
    ['empty', ''],
    ['a folder that does not exist', '/nonexistent/bosun-corpus'],
  ])('name the samples when BOSUN_CORPUS_DIR is %s', async (_what, value) => {
    if (value === undefined) delete process.env.BOSUN_CORPUS_DIR;
    else process.env.BOSUN_CORPUS_DIR = value;
    const got = await catalogDir('/nonexistent/work');
    expect(got).toMatchObject({ catalog: 'catalogs/bosun-samples', key: 'samples' });
    expect(got.dir).toMatch(/catalogs\/bosun-samples$/);
    expect(managerRssFigure(got.key)).toBe('oci.manager_rss.samples_pull.peak');
  });

  it('name the corpus only for the corpus', () => {
    expect(managerRssFigure('corpus')).toBe('oci.manager_rss.corpus_pull.peak');
  });
});
