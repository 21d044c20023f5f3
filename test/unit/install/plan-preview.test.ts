import { describe, expect, it } from 'vitest';
import { previewEntry } from '../../../src/install/plan-preview.js';

const cm = (level: string, extra: object = {}) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'c', namespace: 'ns', ...extra },
  data: { level },
});

describe('previewEntry', () => {
  const where = { kind: 'ConfigMap', name: 'c', namespace: 'ns' };

  it('an object that is not there yet is created', () => {
    expect(previewEntry({ ...where, after: { ok: true, object: cm('info') } })).toEqual({
      ...where,
      action: 'create',
    });
  });

  it('what the API server keeps for itself does not make a change', () => {
    const live = cm('info', { resourceVersion: '1', uid: 'u', managedFields: [{ manager: 'x' }] });
    const after = { ...cm('info', { resourceVersion: '2', uid: 'u' }), status: { whatever: true } };
    expect(previewEntry({ ...where, live, after: { ok: true, object: after } })).toEqual({
      ...where,
      action: 'unchanged',
    });
  });

  it('a change comes with a unified diff, now to after', () => {
    const e = previewEntry({ ...where, live: cm('info'), after: { ok: true, object: cm('debug') } });
    expect(e.action).toBe('change');
    expect(e.diff).toContain('--- ConfigMap ns/c (now)');
    expect(e.diff).toContain('+++ ConfigMap ns/c (after)');
    expect(e.diff).toContain('-  level: info');
    expect(e.diff).toContain('+  level: debug');
  });

  it('a dry run that could not run says so', () => {
    expect(previewEntry({ ...where, after: { ok: false, message: 'no such kind' } })).toEqual({
      ...where,
      action: 'create',
      note: 'not checked: no such kind',
    });
  });
});
