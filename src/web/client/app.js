// The web catalog page: a package grid with search and filters, and a page per package. It builds
// the DOM with createElement and textContent only; the one HTML string it inserts is a package
// description the server rendered and sanitised (src/web/markdown.ts). Routes live in the URL's
// fragment (`#/?q=…`, `#/package/<catalog>/<name>`), so the server serves one page and a search
// or a package can be bookmarked and shared.
/* global document, window, location, history, navigator, fetch, setInterval, setTimeout, clearTimeout, performance, HTMLInputElement, HTMLTextAreaElement, HTMLSelectElement, URLSearchParams, Image, requestIdleCallback */
/** @import { IndexView, PackageSummary, PackageDetail, ChannelView, InstallView } from './api.js' */
/** @import { Query, Facet as FacetName } from './search.js' */
/** @import { Approval as ApprovalName } from './snippet.js' */
import { ApiPath, CatalogMode } from './api.js';
import {
  Facet,
  facets,
  packageSearch,
  queryFromParams,
  queryToParams,
  sortFacetValues,
  unmoved,
} from './search.js';
import { layoutGraph } from './graph.js';
import { Approval, defaultNamespace, installPlan, namespaceProblem, toYaml } from './snippet.js';
import { renderSession } from './session.js';

/** How often the page asks whether the catalog or the cluster changed (a 304 when nothing did). */
const PollMs = 3000;

/** @type {Record<FacetName, string>} */
const FacetLabels = {
  category: 'Category',
  provider: 'Provider',
  capability: 'Capability level',
  installMode: 'Install mode',
  catalog: 'Catalog',
};

const state = {
  /** @type {IndexView | undefined} */
  index: undefined,
  /** @type {string | undefined} */
  indexEtag: undefined,
  /** @type {ReturnType<typeof packageSearch> | undefined} */
  search: undefined,
  /** @type {Query} */
  query: { text: '', filters: {} },
  /** Cards of the current index, by package id. @type {Map<string, HTMLLIElement>} */
  cards: new Map(),
  /** @type {PackageDetail | undefined} */
  detail: undefined,
  /** The install choices made on each package page. @type {Map<string, {namespace: string, channel: string, approval: ApprovalName}>} */
  choices: new Map(),
  /** The channel whose graph each package page shows. @type {Map<string, string>} */
  graphChannel: new Map(),
};

// ---- DOM helpers ----

/**
 * An element with attributes (`class`, `for`, `aria-*` …; `on…` functions become listeners) and
 * children (strings become text nodes).
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {Record<string, string | number | boolean | undefined | ((e: Event) => void)>} [attrs]
 * @param {(Node | string | undefined | false)[]} children
 * @returns {HTMLElementTagNameMap[K]}
 */
function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  setAttributes(el, attrs);
  for (const c of children) if (c !== undefined && c !== false) el.append(c);
  return el;
}

const SvgNs = 'http://www.w3.org/2000/svg';

/**
 * @param {string} tag
 * @param {Record<string, string | number | undefined>} [attrs]
 * @param {(Node | string)[]} children
 * @returns {SVGElement}
 */
function s(tag, attrs = {}, ...children) {
  const el = /** @type {SVGElement} */ (document.createElementNS(SvgNs, tag));
  setAttributes(el, attrs);
  el.append(...children);
  return el;
}

/**
 * @param {Element} el
 * @param {Record<string, string | number | boolean | undefined | ((e: Event) => void)>} attrs
 */
function setAttributes(el, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue;
    if (typeof v === 'function') el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
}

/** @param {string} id */
const byId = (id) => document.getElementById(id);

const main = /** @type {HTMLElement} */ (byId('main'));

// ---- data ----

/**
 * @param {string} url
 * @param {string} [etag]
 * @returns {Promise<{ status: number, etag: string | undefined, body: unknown }>}
 */
async function getJson(url, etag) {
  const res = await fetch(url, { headers: etag ? { 'If-None-Match': etag } : {}, cache: 'no-store' });
  if (res.status === 304) return { status: 304, etag, body: undefined };
  if (!res.ok) {
    const text = await res.text();
    let message = text;
    try {
      message = JSON.parse(text).message ?? text;
    } catch {}
    throw new Error(`${url}: ${res.status} ${message}`);
  }
  return { status: res.status, etag: res.headers.get('ETag') ?? undefined, body: await res.json() };
}

/** Fetches the index; true when it changed. */
async function loadIndex() {
  const r = await getJson(ApiPath.Index, state.indexEtag);
  if (r.status === 304) return false;
  state.index = /** @type {IndexView} */ (r.body);
  state.indexEtag = r.etag;
  state.search = packageSearch(state.index.packages);
  state.cards = new Map();
  const where = byId('where');
  if (where) {
    const n = state.index.catalogs.length;
    where.textContent =
      state.index.mode === CatalogMode.Cluster
        ? `${n} catalog${n === 1 ? '' : 's'} in the cluster`
        : `catalog directory ${state.index.catalogs[0]?.displayName ?? ''}`;
  }
  const session = byId('session');
  if (session) renderSession(session, state.index, () => void afterSignIn());
  return true;
}

/** Signed in or out: what the page may show has changed, so all of it is fetched again. */
async function afterSignIn() {
  state.indexEtag = undefined;
  await loadIndex();
  await route();
  void warmIcons();
}

/** @param {string} catalog @param {string} name */
const packageHash = (catalog, name) => `#/package/${encodeURIComponent(catalog)}/${encodeURIComponent(name)}`;

/** @param {string} catalog */
const catalogLabel = (catalog) => state.index?.catalogs.find((c) => c.id === catalog)?.displayName ?? catalog;

// ---- routing ----

/** @returns {{ view: 'grid', query: Query } | { view: 'package', catalog: string, name: string } | undefined} */
function currentRoute() {
  const hash = location.hash || '#/';
  if (!hash.startsWith('#/')) return undefined; // an in-page anchor (the skip link)
  const pkg = /^#\/package\/([^/]+)\/([^/?]+)$/.exec(hash);
  if (pkg) {
    try {
      return {
        view: 'package',
        catalog: decodeURIComponent(pkg[1] ?? ''),
        name: decodeURIComponent(pkg[2] ?? ''),
      };
    } catch {
      return { view: 'grid', query: { text: '', filters: {} } };
    }
  }
  const q = hash.indexOf('?');
  return { view: 'grid', query: queryFromParams(new URLSearchParams(q < 0 ? '' : hash.slice(q + 1))) };
}

async function route() {
  const r = currentRoute();
  if (!r) return;
  try {
    if (!state.index) await loadIndex();
    if (r.view === 'grid') {
      state.query = r.query;
      state.detail = undefined;
      renderGrid();
    } else {
      await showPackage(r.catalog, r.name);
    }
  } catch (err) {
    showError(err);
  }
}

/** @param {unknown} err */
function showError(err) {
  main.replaceChildren(
    h(
      'div',
      { class: 'error', role: 'alert' },
      h('h1', {}, 'The catalog could not be loaded'),
      h('p', {}, String(err)),
    ),
  );
}

// ---- the grid ----

function renderGrid() {
  const index = /** @type {IndexView} */ (state.index);
  const input = h('input', {
    id: 'search',
    type: 'search',
    placeholder: 'Search by name, keyword, provider…',
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'count',
    value: state.query.text,
    oninput: () => {
      state.query = { ...state.query, text: input.value };
      updateResults();
    },
  });
  main.replaceChildren(
    h('h1', { class: 'visually-hidden', tabindex: '-1', id: 'heading' }, 'Operators'),
    h(
      'div',
      { class: 'catalog' },
      h('aside', { class: 'filters', 'aria-label': 'Filters', id: 'filters' }),
      h(
        'section',
        { class: 'results', 'aria-label': 'Operators' },
        h('div', { class: 'searchbar' }, h('label', { for: 'search' }, 'Search operators'), input),
        h('p', { id: 'count', class: 'count', role: 'status', 'aria-live': 'polite' }),
        h('ul', { class: 'grid', id: 'grid' }),
        h(
          'div',
          { class: 'empty', id: 'empty', hidden: true },
          h('p', {}, 'No operator matches.'),
          h(
            'button',
            { type: 'button', onclick: () => setQuery({ text: '', filters: {} }, true) },
            'Clear search and filters',
          ),
        ),
      ),
    ),
  );
  filters.index = undefined; // a new aside: its rows are built again
  updateResults();
  if (index.packages.length === 0) {
    const count = byId('count');
    if (count) count.textContent = 'No catalog has any package yet.';
  }
}

/**
 * @param {Query} query
 * @param {boolean} [rerender] also reset the search box
 */
function setQuery(query, rerender = false) {
  state.query = query;
  if (rerender) {
    const input = /** @type {HTMLInputElement | null} */ (byId('search'));
    if (input) input.value = query.text;
  }
  updateResults();
}

/** Runs the search and shows its matches, count and filters; keeps the query in the address. */
function updateResults() {
  const index = state.index;
  const search = state.search;
  if (!index || !search) return;
  const { matches, counts } = search.search(state.query);
  const grid = byId('grid');
  const count = byId('count');
  const empty = byId('empty');
  if (!grid || !count || !empty) return;
  showCards(grid, matches.map(card));
  const total = index.packages.length;
  count.textContent =
    matches.length === total
      ? `${total} operator${total === 1 ? '' : 's'}`
      : `${matches.length} of ${total} operator${total === 1 ? '' : 's'}`;
  empty.hidden = matches.length > 0 || total === 0;
  if (filters.index !== index) buildFilters(index);
  updateFilters(counts);
  clearTimeout(addressTimer);
  addressTimer = setTimeout(updateAddress, AddressDelayMs);
}

/**
 * Puts `cards` in the grid, in order, touching as few as it can: cards that no longer match
 * leave, new matches come in, and of the cards already there only those out of order move. The
 * browser styles and lays out again every card inserted or moved, and a one-letter search shows
 * nearly all of them.
 * @param {HTMLElement} grid
 * @param {HTMLLIElement[]} cards
 */
function showCards(grid, cards) {
  /** @type {Set<Element>} */
  const wanted = new Set(cards);
  for (const li of [...grid.children]) if (!wanted.has(li)) li.remove();
  const stay = unmoved([...grid.children], cards);
  // From the last card back, each one that moves goes before the card that follows it.
  /** @type {Element | null} */
  let following = null;
  for (const li of cards.toReversed()) {
    if (!stay.has(li)) grid.insertBefore(li, following);
    following = li;
  }
}

/**
 * The address follows the query a moment after the last keystroke: one history entry rewritten per
 * pause, not per letter (browsers throttle pages that rewrite it hundreds of times).
 */
const AddressDelayMs = 250;
/** @type {ReturnType<typeof setTimeout> | undefined} */
let addressTimer;

function updateAddress() {
  if (currentRoute()?.view !== 'grid') return;
  const params = queryToParams(state.query).toString();
  const hash = params ? `#/?${params}` : '#/';
  if (location.hash !== hash && !(hash === '#/' && location.hash === ''))
    history.replaceState(null, '', hash);
}

/**
 * The filter lists, built once per index with every value it has (and any selected in the
 * address); a search then only updates counts and checkboxes, so typing does not rebuild hundreds
 * of rows, and a row that takes the focus keeps it.
 * @type {{ index: IndexView | undefined, rows: { facet: FacetName, value: string, li: HTMLLIElement, box: HTMLInputElement, n: HTMLSpanElement }[], clear: HTMLButtonElement | undefined }}
 */
const filters = { index: undefined, rows: [], clear: undefined };

/** @param {IndexView} index */
function buildFilters(index) {
  const aside = byId('filters');
  if (!aside || !state.search) return;
  const every = state.search.search({ text: '', filters: {} }).counts;
  filters.index = index;
  filters.rows = [];
  const groups = facets.map((f) => {
    const values = new Set([...every[f].map((v) => v.value), ...(state.query.filters[f] ?? [])]);
    if (values.size === 0) return '';
    const ordered = sortFacetValues(
      f,
      [...values].map((value) => ({ value, count: 0 })),
    );
    return h(
      'fieldset',
      { class: 'facet' },
      h('legend', {}, FacetLabels[f]),
      h(
        'ul',
        {},
        ...ordered.map(({ value }, i) => {
          // Numbered: two values may differ only in characters an id cannot hold.
          const id = `f-${f}-${i}`;
          const box = h('input', {
            type: 'checkbox',
            id,
            'data-key': `${f}:${value}`,
            onchange: () => toggleFilter(f, value, box.checked),
          });
          const n = h('span', { class: 'n' });
          const li = h(
            'li',
            {},
            box,
            h(
              'label',
              { for: id },
              h('span', { class: 'value' }, f === Facet.Catalog ? catalogLabel(value) : value),
              n,
            ),
          );
          filters.rows.push({ facet: f, value, li, box, n });
          return li;
        }),
      ),
    );
  });
  filters.clear = h(
    'button',
    { type: 'button', class: 'link', onclick: () => setQuery({ ...state.query, filters: {} }) },
    'Clear filters',
  );
  aside.replaceChildren(h('h2', {}, 'Filters'), filters.clear, ...groups);
}

/** @param {Record<FacetName, {value: string, count: number}[]>} counts */
function updateFilters(counts) {
  /** @type {Map<string, number>} */
  const byKey = new Map();
  for (const f of facets) for (const { value, count } of counts[f]) byKey.set(`${f}\0${value}`, count);
  for (const row of filters.rows) {
    const selected = (state.query.filters[row.facet] ?? []).includes(row.value);
    const count = String(byKey.get(`${row.facet}\0${row.value}`) ?? 0);
    if (row.n.textContent !== count) row.n.textContent = count;
    row.box.checked = selected;
    row.li.classList.toggle('none', count === '0' && !selected);
  }
  if (filters.clear) filters.clear.hidden = !facets.some((f) => (state.query.filters[f] ?? []).length > 0);
}

/**
 * @param {FacetName} facet
 * @param {string} value
 * @param {boolean} on
 */
function toggleFilter(facet, value, on) {
  const current = new Set(state.query.filters[facet] ?? []);
  if (on) current.add(value);
  else current.delete(value);
  setQuery({ ...state.query, filters: { ...state.query.filters, [facet]: [...current] } });
}

/** @param {string} displayName */
function placeholderIcon(displayName) {
  return h(
    'span',
    { class: 'icon placeholder', 'aria-hidden': 'true' },
    (displayName.trim()[0] ?? '?').toUpperCase(),
  );
}

/** @param {InstallView[]} installs */
function installBadges(installs) {
  const badges = [];
  if (installs.some((i) => i.installedCSV)) {
    const where = installs.filter((i) => i.installedCSV).map((i) => i.namespace);
    badges.push(
      h('span', { class: 'badge installed', title: `installed in ${where.join(', ')}` }, 'Installed'),
    );
  }
  if (installs.some((i) => i.upgrade))
    badges.push(h('span', { class: 'badge upgrade' }, 'Upgrade available'));
  if (installs.some((i) => i.upgrade?.waitsForApproval || i.installWaitsForApproval)) {
    badges.push(h('span', { class: 'badge approval' }, 'Waits for approval'));
  }
  return badges;
}

/** @param {PackageSummary} p */
function card(p) {
  const cached = state.cards.get(p.id);
  if (cached) return cached;
  const li = h(
    'li',
    {},
    h(
      'a',
      { class: 'card', href: packageHash(p.catalog, p.name), 'data-package': p.id },
      p.icon
        ? h('img', {
            class: 'icon',
            src: p.icon,
            alt: '',
            width: 48,
            height: 48,
            loading: 'lazy',
            decoding: 'async',
          })
        : placeholderIcon(p.displayName),
      h('span', { class: 'title' }, p.displayName),
      h('span', { class: 'provider' }, p.provider ? `by ${p.provider}` : p.name),
      h('span', { class: 'desc' }, p.description),
      h(
        'span',
        { class: 'meta' },
        p.version ? h('span', { class: 'version' }, p.version) : '',
        p.capability ? h('span', { class: 'capability' }, p.capability) : '',
      ),
      h(
        'span',
        { class: 'badges' },
        ...installBadges(p.installs),
        p.deprecation ? h('span', { class: 'badge deprecated', title: p.deprecation }, 'Deprecated') : '',
      ),
    ),
  );
  state.cards.set(p.id, li);
  return li;
}

// ---- a package ----

/** @param {string} catalog @param {string} name */
async function showPackage(catalog, name) {
  const url = `${ApiPath.Packages}${encodeURIComponent(catalog)}/${encodeURIComponent(name)}`;
  const r = await getJson(url);
  state.detail = /** @type {PackageDetail} */ (r.body);
  renderPackage(state.detail);
  byId('heading')?.focus();
}

/** The grid's address with the last search, for the way back. */
function gridHash() {
  const params = queryToParams(state.query).toString();
  return params ? `#/?${params}` : '#/';
}

/** @param {PackageDetail} p */
function renderPackage(p) {
  const choice = state.choices.get(p.id) ?? {
    namespace: defaultNamespace(p),
    channel: p.defaultChannel,
    approval: /** @type {ApprovalName} */ (Approval.Automatic),
  };
  state.choices.set(p.id, choice);
  const descriptionBox = h('div', { class: 'description' });
  // The server rendered this from Markdown and sanitised it (allow-listed tags and attributes,
  // no script, no event handlers, no javascript: URLs); the CSP forbids inline script besides.
  descriptionBox.innerHTML = p.descriptionHtml;
  main.replaceChildren(
    h(
      'nav',
      { class: 'crumbs', 'aria-label': 'Breadcrumb' },
      h('a', { href: gridHash() }, '← All operators'),
    ),
    h(
      'article',
      { class: 'package' },
      h(
        'header',
        { class: 'pkg-head' },
        p.icon
          ? h('img', { class: 'icon big', src: p.icon, alt: `${p.displayName} logo`, width: 72, height: 72 })
          : placeholderIcon(p.displayName),
        h(
          'div',
          {},
          h('h1', { id: 'heading', tabindex: '-1' }, p.displayName),
          h('p', { class: 'pkg-meta', id: 'pkg-meta' }),
          h('p', { class: 'badges', id: 'pkg-badges' }),
          p.deprecation ? h('p', { class: 'deprecation', role: 'note' }, `Deprecated: ${p.deprecation}`) : '',
        ),
      ),
      h('section', { id: 'pkg-installs', 'aria-label': 'Installed' }),
      h(
        'div',
        { class: 'pkg-body' },
        h(
          'div',
          { class: 'pkg-main' },
          h(
            'section',
            { 'aria-labelledby': 'h-desc' },
            h('h2', { id: 'h-desc' }, 'Description'),
            descriptionBox,
            p.descriptionTruncated
              ? h(
                  'p',
                  { class: 'note' },
                  'The description is longer than the catalog page shows; it was cut here.',
                )
              : '',
          ),
          h('section', { 'aria-labelledby': 'h-channels', id: 'channels' }),
          renderApis(p),
        ),
        h('aside', { class: 'pkg-side' }, renderInstallBox(p, choice), renderDetails(p)),
      ),
    ),
  );
  refreshPackage(p);
}

/**
 * The parts of a package page that follow the catalog and the cluster: version, badges, installs,
 * channels and graph, install YAML. The rest stays, so a poll never moves the reader's focus.
 * @param {PackageDetail} p
 */
function refreshPackage(p) {
  const meta = [
    p.provider
      ? p.providerUrl
        ? h(
            'a',
            { class: 'provider', href: p.providerUrl, rel: 'noopener noreferrer', target: '_blank' },
            p.provider,
          )
        : h('span', { class: 'provider' }, p.provider)
      : undefined,
    p.version ? `version ${p.version}` : undefined,
    `catalog ${catalogLabel(p.catalog)}`,
  ].filter((x) => x !== undefined);
  byId('pkg-meta')?.replaceChildren(...meta.flatMap((m, i) => (i ? [' · ', m] : [m])));
  byId('pkg-badges')?.replaceChildren(...installBadges(p.installs));
  byId('pkg-installs')?.replaceChildren(...renderInstalls(p.installs));
  renderChannels(p);
  updateInstallOutput(p);
}

/** @param {InstallView[]} installs */
function renderInstalls(installs) {
  if (installs.length === 0) return [];
  const row = (/** @type {InstallView} */ i) => {
    const upgrade = i.upgrade
      ? `${i.upgrade.version ?? i.upgrade.csv}${i.upgrade.waitsForApproval ? ' (waits for approval)' : ''}`
      : i.installWaitsForApproval
        ? 'install waits for approval'
        : '—';
    return h(
      'tr',
      { 'data-namespace': i.namespace },
      h('td', {}, i.namespace),
      h('td', {}, i.subscription),
      h('td', {}, i.channel ?? 'default'),
      h('td', {}, i.installedVersion ?? i.installedCSV ?? 'not yet'),
      h('td', {}, i.phase ? h('span', { class: `phase ${i.phase.toLowerCase()}` }, i.phase) : '—'),
      h('td', {}, i.state || '—'),
      h('td', {}, upgrade),
    );
  };
  return [
    h('h2', {}, 'Installed in this cluster'),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'installs' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['Namespace', 'Subscription', 'Channel', 'Version', 'CSV phase', 'State', 'Upgrade'].map((t) =>
              h('th', { scope: 'col' }, t),
            ),
          ),
        ),
        h('tbody', {}, ...installs.map(row)),
      ),
    ),
  ];
}

/** @param {PackageDetail} p */
function renderChannels(p) {
  const section = byId('channels');
  if (!section) return;
  const shown = state.graphChannel.get(p.id) ?? p.defaultChannel;
  const channel = p.channels.find((c) => c.name === shown) ?? p.channels[0];
  const select =
    p.channels.length > 1
      ? h(
          'label',
          { class: 'inline' },
          'Channel ',
          h(
            'select',
            {
              id: 'graph-channel',
              onchange: (e) => {
                state.graphChannel.set(p.id, /** @type {HTMLSelectElement} */ (e.target).value);
                renderChannels(p);
                byId('graph-channel')?.focus();
              },
            },
            ...p.channels.map((c) =>
              h(
                'option',
                { value: c.name, selected: c.name === channel?.name },
                `${c.name}${c.name === p.defaultChannel ? ' (default)' : ''}`,
              ),
            ),
          ),
        )
      : '';
  section.replaceChildren(
    h('h2', { id: 'h-channels' }, 'Channels and upgrades'),
    h(
      'p',
      {},
      ...p.channels.flatMap((c, i) => [
        i ? ', ' : '',
        h('strong', {}, c.name),
        ` (${c.headVersion ?? c.head}${c.name === p.defaultChannel ? ', default' : ''}${c.deprecation ? ', deprecated' : ''})`,
      ]),
    ),
    select,
    channel ? renderGraph(p, channel) : '',
    channel ? renderEntries(channel) : '',
  );
}

/**
 * The channel's upgrade graph as SVG (layout in graph.ts), with a text equivalent beside it.
 * @param {PackageDetail} p
 * @param {ChannelView} channel
 */
function renderGraph(p, channel) {
  const installed = new Set(p.installs.filter((i) => i.installedCSV).map((i) => i.installedCSV));
  const layout = layoutGraph(
    channel.entries.map((e) => ({ id: e.name, label: e.version ?? e.name })),
    channel.edges,
  );
  const kinds = ['replaces', 'skips', 'skipRange'];
  const defs = s(
    'defs',
    {},
    ...kinds.map((k) =>
      s(
        'marker',
        {
          id: `arrow-${k}`,
          viewBox: '0 0 8 8',
          refX: 7,
          refY: 4,
          markerWidth: 7,
          markerHeight: 7,
          orient: 'auto-start-reverse',
        },
        s('path', { d: 'M0,0 L8,4 L0,8 z', class: `arrowhead ${k}` }),
      ),
    ),
  );
  const edges = layout.edges.map((e) =>
    s(
      'path',
      { d: e.path, class: `edge ${e.kind}`, 'marker-end': `url(#arrow-${e.kind})` },
      s('title', {}, `${e.from} → ${e.to} (${e.kind})`),
    ),
  );
  const nodes = layout.nodes.map((n) => {
    const classes = ['node'];
    if (n.id === channel.head) classes.push('head');
    if (installed.has(n.id)) classes.push('installed');
    const entry = channel.entries.find((e) => e.name === n.id);
    if (entry?.deprecation) classes.push('deprecated');
    const marks = [n.id === channel.head ? 'head' : '', installed.has(n.id) ? 'installed' : '']
      .filter(Boolean)
      .join(', ');
    return s(
      'g',
      { class: classes.join(' '), 'data-bundle': n.id },
      s('title', {}, `${n.id}${marks ? ` (${marks})` : ''}`),
      s('rect', { x: n.x, y: n.y, width: n.width, height: n.height, rx: 5 }),
      s(
        'text',
        { x: n.x + 10, y: n.y + n.height / 2 + 4 },
        n.label.length > 24 ? `${n.label.slice(0, 23)}…` : n.label,
      ),
      marks
        ? s(
            'text',
            { x: n.x + n.width - 8, y: n.y + n.height / 2 + 4, class: 'mark', 'text-anchor': 'end' },
            marks,
          )
        : '',
    );
  });
  const svg = s(
    'svg',
    {
      class: 'graph',
      id: 'graph',
      width: layout.width,
      height: layout.height,
      viewBox: `0 0 ${layout.width} ${layout.height}`,
      role: 'img',
      'aria-label': `Upgrade graph of channel ${channel.name}: ${channel.entries.length} versions, newest at the top; the table below lists the same edges`,
    },
    defs,
    ...edges,
    ...nodes,
  );
  const legend = h(
    'p',
    { class: 'legend' },
    h('span', { class: 'key replaces' }, 'replaces'),
    h('span', { class: 'key skips' }, 'skips'),
    h('span', { class: 'key skipRange' }, 'skipRange'),
    ' · arrows point to the version upgraded to',
  );
  const verb = { replaces: 'replaces', skips: 'skips', skipRange: 'has in its skipRange' };
  const outside = layout.outside.length
    ? h(
        'p',
        { class: 'note' },
        `Not drawn: ${layout.outside
          .map(
            (e) =>
              `${e.to} ${verb[e.kind]} ${e.from}, ${e.from === e.to ? 'itself' : 'which is not in this channel'}`,
          )
          .join('; ')}.`,
      )
    : '';
  return h('figure', { class: 'graph-box' }, h('div', { class: 'graph-scroll' }, svg), legend, outside);
}

/** @param {ChannelView} channel */
function renderEntries(channel) {
  const from = (/** @type {string} */ name) =>
    channel.edges
      .filter((e) => e.to === name)
      .map((e) => `${channel.entries.find((x) => x.name === e.from)?.version ?? e.from} (${e.kind})`)
      .join(', ');
  return h(
    'details',
    { class: 'entries' },
    h(
      'summary',
      {},
      `The ${channel.entries.length} versions of `,
      h('span', { class: 'name' }, channel.name),
      ' as a table',
    ),
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        {},
        h(
          'thead',
          {},
          h('tr', {}, ...['Version', 'Bundle', 'Upgrades from'].map((t) => h('th', { scope: 'col' }, t))),
        ),
        h(
          'tbody',
          {},
          ...channel.entries.map((e) =>
            h(
              'tr',
              {},
              h(
                'td',
                {},
                e.version ?? '—',
                e.name === channel.head ? ' (head)' : '',
                e.deprecation ? ' (deprecated)' : '',
              ),
              h('td', {}, h('code', {}, e.name)),
              h('td', {}, from(e.name) || '—'),
            ),
          ),
        ),
      ),
    ),
  );
}

/** @param {PackageDetail} p */
function renderApis(p) {
  const table = (/** @type {string} */ title, /** @type {PackageDetail['apis']['owned']} */ list) =>
    list.length === 0
      ? ''
      : h(
          'div',
          {},
          h('h3', {}, title),
          h(
            'div',
            { class: 'table-wrap' },
            h(
              'table',
              {},
              h(
                'thead',
                {},
                h(
                  'tr',
                  {},
                  ...['Kind', 'Name', 'Version', 'Description'].map((t) => h('th', { scope: 'col' }, t)),
                ),
              ),
              h(
                'tbody',
                {},
                ...list.map((a) =>
                  h(
                    'tr',
                    {},
                    h('td', {}, a.displayName ?? a.kind ?? ''),
                    h('td', {}, h('code', {}, a.name)),
                    h('td', {}, a.version ?? ''),
                    h('td', {}, a.description ?? ''),
                  ),
                ),
              ),
            ),
          ),
        );
  if (p.apis.owned.length === 0 && p.apis.required.length === 0) return '';
  return h(
    'section',
    { 'aria-labelledby': 'h-apis' },
    h('h2', { id: 'h-apis' }, 'APIs'),
    table('Provided (owned CRDs and APIs)', p.apis.owned),
    table('Required', p.apis.required),
  );
}

/**
 * @param {PackageDetail} p
 * @param {{namespace: string, channel: string, approval: ApprovalName}} choice
 */
function renderInstallBox(p, choice) {
  const ns = h('input', {
    id: 'install-namespace',
    type: 'text',
    value: choice.namespace,
    autocomplete: 'off',
    spellcheck: 'false',
    'aria-describedby': 'install-ns-problem',
    oninput: () => {
      choice.namespace = ns.value.trim();
      updateInstallOutput(p);
    },
  });
  const channel = h(
    'select',
    {
      id: 'install-channel',
      onchange: () => {
        choice.channel = channel.value;
        updateInstallOutput(p);
      },
    },
    ...p.channels.map((c) =>
      h(
        'option',
        { value: c.name, selected: c.name === choice.channel },
        `${c.name}${c.name === p.defaultChannel ? ' (default)' : ''}`,
      ),
    ),
  );
  const approval = h(
    'select',
    {
      id: 'install-approval',
      onchange: () => {
        choice.approval = approval.value === Approval.Manual ? Approval.Manual : Approval.Automatic;
        updateInstallOutput(p);
      },
    },
    h('option', { value: Approval.Automatic, selected: choice.approval === Approval.Automatic }, 'Automatic'),
    h('option', { value: Approval.Manual, selected: choice.approval === Approval.Manual }, 'Manual'),
  );
  return h(
    'section',
    { class: 'install', 'aria-labelledby': 'h-install' },
    h('h2', { id: 'h-install' }, 'Install'),
    h('div', { class: 'field' }, h('label', { for: 'install-namespace' }, 'Namespace'), ns),
    h('p', { class: 'problem', id: 'install-ns-problem', role: 'alert' }),
    h('div', { class: 'field' }, h('label', { for: 'install-channel' }, 'Channel'), channel),
    h('div', { class: 'field' }, h('label', { for: 'install-approval' }, 'Approval'), approval),
    h(
      'p',
      {},
      'Apply these objects with ',
      h('code', {}, 'kubectl apply -f -'),
      ' (paste, then Ctrl-D), or save them to a file:',
    ),
    h(
      'pre',
      { class: 'yaml', tabindex: '0', 'aria-label': 'Objects to apply' },
      h('code', { id: 'install-yaml' }),
    ),
    h(
      'div',
      { class: 'copy-row' },
      h('button', { type: 'button', id: 'copy', onclick: () => void copyYaml() }, 'Copy'),
      h('span', { id: 'copied', role: 'status', 'aria-live': 'polite' }),
    ),
    h('ul', { class: 'notes', id: 'install-notes' }),
  );
}

/** @param {PackageDetail} p */
function updateInstallOutput(p) {
  const choice = state.choices.get(p.id);
  const code = byId('install-yaml');
  const problem = byId('install-ns-problem');
  const notes = byId('install-notes');
  if (!choice || !code || !problem || !notes) return;
  const nsProblem = namespaceProblem(choice.namespace);
  const plan = nsProblem ? undefined : installPlan(p, choice);
  code.textContent = plan ? toYaml(plan.objects) : '';
  problem.textContent = nsProblem ?? plan?.problem ?? '';
  notes.replaceChildren(...(plan?.notes ?? []).map((n) => h('li', {}, n)));
  const copy = /** @type {HTMLButtonElement | null} */ (byId('copy'));
  if (copy) copy.disabled = !plan;
}

async function copyYaml() {
  const text = byId('install-yaml')?.textContent ?? '';
  const status = byId('copied');
  try {
    if (navigator.clipboard) {
      await navigator.clipboard.writeText(text);
    } else {
      // An insecure origin (http on another host than localhost) has no clipboard API.
      const area = h('textarea', { class: 'visually-hidden', readonly: true });
      area.value = text;
      document.body.append(area);
      area.select();
      const ok = document.execCommand('copy');
      area.remove();
      if (!ok) throw new Error('the browser refused to copy');
    }
    if (status) status.textContent = 'Copied.';
  } catch (err) {
    if (status)
      status.textContent = `Not copied (${err instanceof Error ? err.message : String(err)}): select the text and copy it.`;
  }
}

/** @param {PackageDetail} p */
function renderDetails(p) {
  /** @type {[string, Node | string][]} */
  const rows = [];
  const add = (/** @type {string} */ k, /** @type {Node | string | undefined} */ v) => {
    if (v !== undefined && v !== '') rows.push([k, v]);
  };
  add('Provider', p.provider);
  add('Capability level', p.capability);
  add('Maturity', p.maturity);
  add('Install modes', p.installModes.join(', '));
  add('Categories', p.categories.join(', '));
  add('Keywords', p.keywords.join(', '));
  add('Container image', p.containerImage ? h('code', {}, p.containerImage) : undefined);
  add('Created', p.createdAt);
  add('Minimum Kubernetes', p.minKubeVersion);
  add('Suggested namespace', p.suggestedNamespace);
  add('Package', h('code', {}, p.name));
  const link = (/** @type {string} */ url, /** @type {string} */ text) =>
    h('a', { href: url, rel: 'noopener noreferrer', target: '_blank' }, text);
  return h(
    'section',
    { class: 'details', 'aria-labelledby': 'h-details' },
    h('h2', { id: 'h-details' }, 'Details'),
    h('dl', {}, ...rows.flatMap(([k, v]) => [h('dt', {}, k), h('dd', {}, v)])),
    p.links.length ? h('h3', {}, 'Links') : '',
    p.links.length ? h('ul', {}, ...p.links.map((l) => h('li', {}, link(l.url, l.name)))) : '',
    p.maintainers.length ? h('h3', {}, 'Maintainers') : '',
    p.maintainers.length
      ? h(
          'ul',
          {},
          ...p.maintainers.map((m) =>
            h(
              'li',
              {},
              m.name ?? '',
              m.email ? ' ' : '',
              m.email ? link(`mailto:${m.email}`, `<${m.email}>`) : '',
            ),
          ),
        )
      : '',
  );
}

// ---- keeping up with the cluster ----

async function poll() {
  if (document.visibilityState === 'hidden' || !state.index) return;
  try {
    if (!(await loadIndex())) return;
    const r = currentRoute();
    if (r?.view === 'grid') updateResults();
    else if (r?.view === 'package' && state.detail) {
      const url = `${ApiPath.Packages}${encodeURIComponent(r.catalog)}/${encodeURIComponent(r.name)}`;
      const fresh = /** @type {PackageDetail} */ ((await getJson(url)).body);
      state.detail = fresh;
      refreshPackage(fresh);
    }
  } catch {
    // The next poll tries again; a manager restarting is not worth a message.
  }
}

// `/` jumps to the search box, as on most catalog sites.
document.addEventListener('keydown', (e) => {
  const t = e.target;
  const typing =
    t instanceof HTMLInputElement || t instanceof HTMLTextAreaElement || t instanceof HTMLSelectElement;
  if (e.key === '/' && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
    const input = byId('search');
    if (input) {
      e.preventDefault();
      input.focus();
    }
  }
});

// ---- icons ----

/**
 * Icons come from the catalogs, some as SVG of a few hundred KB, and the browser parses an SVG on
 * the main thread when its download ends: cards scrolled into view by a search paid for that on
 * the keystroke. Once the first view is up, the page downloads every icon itself, one at a time in
 * idle time, so a search finds them parsed. The images are kept, so the browser keeps them too.
 * @type {HTMLImageElement[]}
 */
const warmedIcons = [];

/** Which call of warmIcons is the latest: signing in brings icons of more catalogs to warm. */
let warming = 0;

async function warmIcons() {
  const run = ++warming;
  delete document.body.dataset.iconsReady;
  const urls = new Set((state.index?.packages ?? []).map((p) => p.icon).filter((u) => u !== undefined));
  for (const url of urls) {
    await idle();
    if (run !== warming) return;
    const img = new Image();
    img.src = url;
    // A broken icon is the card's problem, not this loop's.
    await img.decode().catch(() => undefined);
    warmedIcons.push(img);
  }
  document.body.dataset.iconsReady = 'true';
  performance.mark('bosun:icons-ready');
}

/** @returns {Promise<void>} */
function idle() {
  return new Promise((resolve) => requestIdleCallback(() => resolve(), { timeout: 1000 }));
}

window.addEventListener('hashchange', () => void route());
setInterval(() => void poll(), PollMs);
await route();
document.body.dataset.ready = 'true';
// For the benchmarks: the time from navigation to a usable first view.
performance.mark('bosun:ready');
void warmIcons();
