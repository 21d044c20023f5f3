// Signing in to the manager's web catalog (src/web/session.ts and src/web/scope.ts on the server):
// anyone sees the global catalogs; a viewer who signs in with a bearer token sees, in addition,
// what Kubernetes lets that user list (installs, namespaces, OperatorGroups, their namespaces'
// catalogs). The token is sent once, in an Authorization header; the server keeps it and answers
// with an HttpOnly cookie, so the page itself never holds it after this form.
/* global document, fetch */
/** @import { IndexView } from './api.js' */
import { ApiPath } from './api.js';

/** What the header shows now, so a poll that changes nothing else does not clear a half-typed token. */
let shown = '';

/**
 * Shows who is signed in (and a way out), or a way in, in `el`; `changed` runs after either.
 * @param {HTMLElement} el
 * @param {IndexView} index
 * @param {() => void} changed
 */
export function renderSession(el, index, changed) {
  const viewer = index.viewer;
  const key = JSON.stringify(viewer ?? null);
  if (key === shown) return;
  shown = key;
  el.replaceChildren();
  if (!viewer?.signIn) return;
  if (viewer.user) {
    const out = element('button', { type: 'button', id: 'sign-out' }, 'Sign out');
    out.addEventListener('click', () => {
      void fetch(ApiPath.Session, { method: 'DELETE', cache: 'no-store' }).then(changed, changed);
    });
    el.append(element('span', { id: 'signed-in-as' }, `Signed in as ${viewer.user}`), ' ', out);
    return;
  }
  const input = element('input', {
    id: 'session-token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'session-help',
  });
  const problem = element('p', { class: 'problem', id: 'session-problem', role: 'alert' });
  const form = element(
    'form',
    { id: 'sign-in' },
    element('label', { for: 'session-token' }, 'Bearer token '),
    input,
    ' ',
    element('button', { type: 'submit' }, 'Sign in'),
    problem,
    element(
      'p',
      { class: 'note', id: 'session-help' },
      'Signed in, the page also shows what the token`s user may list: installs, namespaces, OperatorGroups ' +
        'and namespaces` own catalogs (a token: kubectl create token <serviceaccount>).',
    ),
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const token = input.value.trim();
    if (!token) return;
    problem.textContent = '';
    void signIn(token).then(
      () => {
        input.value = '';
        changed();
      },
      (/** @type {Error} */ err) => {
        problem.textContent = err.message;
      },
    );
  });
  el.append(element('details', {}, element('summary', {}, 'Sign in'), form));
}

/** @param {string} token */
async function signIn(token) {
  const res = await fetch(ApiPath.Session, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}` },
    cache: 'no-store',
  });
  if (res.ok) return;
  let message = `${res.status}`;
  try {
    message = /** @type {{ message?: string }} */ (await res.json()).message ?? message;
  } catch {}
  throw new Error(`Not signed in: ${message}.`);
}

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string>} attrs
 * @param {(Node | string)[]} children
 * @returns {HTMLElementTagNameMap[K]}
 */
function element(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}
