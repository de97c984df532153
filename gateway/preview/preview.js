// Sift's search preview: a page for trying an index's relevance by hand, served by the gateway in
// development. No framework and no build step: it calls the same public API any client does, on the
// origin that served it, with the API key kept in localStorage (sent as a Bearer header, never in a URL).
"use strict";

(() => {
  const KEY_ITEM = "sift-preview:api-key";
  const INDEX_ITEM = "sift-preview:index";
  const HITS_PER_PAGE = 10;
  const FACET_VALUES_SHOWN = 10;
  const ARRAY_ITEMS_SHOWN = 6;
  // Private-use characters as highlight tags: text is never parsed as HTML, the marks are built as nodes.
  const PRE = "\uE000";
  const POST = "\uE001";
  const NARROW = window.matchMedia("(max-width: 700px)");

  const byId = (id) => document.getElementById(id);
  const ui = {
    indexSelect: byId("index-select"),
    indexUid: byId("index-uid"),
    keyForm: byId("key-form"),
    key: byId("api-key"),
    forgetKey: byId("forget-key"),
    notice: byId("notice"),
    query: byId("q"),
    stats: byId("stats"),
    facets: byId("facets"),
    hits: byId("hits"),
    pagination: byId("pagination"),
    previous: byId("previous-page"),
    next: byId("next-page"),
    pageInfo: byId("page-info"),
  };

  const state = {
    index: null,
    page: 1,
    totalPages: 0,
    filters: new Map(), // attribute -> Set of ticked values
    facetsEnabled: true, // false once the index answered that nothing is filterable
    openFacets: new Map(), // attribute -> whether its <details> is open
    inFlight: null,
  };

  const stored = {
    get(item) {
      try {
        return window.localStorage.getItem(item) || "";
      } catch {
        return "";
      }
    },
    set(item, value) {
      try {
        if (value) window.localStorage.setItem(item, value);
        else window.localStorage.removeItem(item);
      } catch {
        // Storage disabled: the key lasts as long as the page.
      }
    },
  };
  let sessionKey = stored.get(KEY_ITEM);
  ui.key.value = sessionKey; // shown as dots: a stored key is visible as there, and can be replaced

  class ApiError extends Error {
    constructor(status, payload) {
      super((payload && payload.message) || `The server answered HTTP ${status}.`);
      this.status = status;
      this.code = payload && payload.code;
    }
  }

  async function api(method, path, body, signal) {
    const headers = {};
    if (sessionKey) headers.Authorization = `Bearer ${sessionKey}`;
    if (body !== undefined) headers["Content-Type"] = "application/json";
    const response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
      cache: "no-store",
    });
    const text = await response.text();
    let payload = null;
    try {
      payload = text ? JSON.parse(text) : null;
    } catch {
      payload = null;
    }
    if (!response.ok) throw new ApiError(response.status, payload);
    return payload;
  }

  function notice(message) {
    ui.notice.textContent = message || "";
    ui.notice.hidden = !message;
  }

  // ---- Indexes and the API key ----------------------------------------------------------------------

  async function loadIndexes() {
    let listed;
    try {
      listed = await api("GET", "/indexes?limit=1000");
    } catch (error) {
      clearResults();
      if (error.status === 401) {
        ui.keyForm.hidden = false;
        notice("This instance is protected by a master key: enter an API key to search.");
        ui.key.focus();
      } else if (error.status === 403) {
        // An invalid key and a key without `indexes.get` (a search key) get the same answer.
        ui.keyForm.hidden = false;
        typeIndexUid();
        notice(
          "This key cannot list the indexes (a search-only key, or an invalid one): " +
            "type the uid of an index it may search.",
        );
      } else {
        notice(`Could not list the indexes: ${error.message}`);
      }
      return;
    }
    ui.keyForm.hidden = !sessionKey;
    notice("");
    pickFromList(listed.results.map((index) => index.uid));
  }

  function pickFromList(uids) {
    ui.indexUid.hidden = true;
    ui.indexSelect.hidden = false;
    ui.indexSelect.replaceChildren(
      ...uids.map((uid) => {
        const option = document.createElement("option");
        option.value = option.textContent = uid;
        return option;
      }),
    );
    if (uids.length === 0) {
      clearResults();
      notice("There is no index yet: add documents through the API, then reload this page.");
      return;
    }
    const remembered = stored.get(INDEX_ITEM);
    const uid = uids.includes(state.index) ? state.index : uids.includes(remembered) ? remembered : uids[0];
    ui.indexSelect.value = uid;
    useIndex(uid, true);
  }

  function typeIndexUid() {
    ui.indexSelect.hidden = true;
    ui.indexUid.hidden = false;
    if (!ui.indexUid.value) ui.indexUid.value = state.index || stored.get(INDEX_ITEM);
    if (ui.indexUid.value) useIndex(ui.indexUid.value.trim(), true);
  }

  function useIndex(uid, force) {
    if (!uid || (uid === state.index && !force)) return;
    if (uid !== state.index) {
      state.filters.clear();
      state.openFacets.clear();
      state.facetsEnabled = true;
    }
    state.index = uid;
    state.page = 1;
    stored.set(INDEX_ITEM, uid);
    search();
  }

  ui.indexSelect.addEventListener("change", () => useIndex(ui.indexSelect.value));
  ui.indexUid.addEventListener("change", () => useIndex(ui.indexUid.value.trim()));
  ui.indexUid.addEventListener("keydown", (event) => {
    if (event.key === "Enter") useIndex(ui.indexUid.value.trim());
  });

  ui.keyForm.addEventListener("submit", (event) => {
    event.preventDefault();
    sessionKey = ui.key.value.trim();
    stored.set(KEY_ITEM, sessionKey);
    loadIndexes();
  });
  ui.forgetKey.addEventListener("click", () => {
    sessionKey = "";
    ui.key.value = "";
    stored.set(KEY_ITEM, "");
    loadIndexes();
  });

  // ---- Searching ------------------------------------------------------------------------------------

  function quoted(value) {
    return `"${String(value).replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  }

  /** Values ticked under one attribute are alternatives (OR); attributes combine with AND. */
  function filterWithout(skipped) {
    const filter = [];
    for (const [attribute, values] of state.filters) {
      if (attribute === skipped || values.size === 0) continue;
      filter.push([...values].map((value) => `${attribute} = ${quoted(value)}`));
    }
    return filter;
  }

  function tickedAttributes() {
    return [...state.filters].filter(([, values]) => values.size > 0).map(([attribute]) => attribute);
  }

  async function search() {
    if (!state.index) return;
    if (state.inFlight) state.inFlight.abort();
    const controller = new AbortController();
    state.inFlight = controller;
    const q = ui.query.value;
    const main = {
      indexUid: state.index,
      q,
      page: state.page,
      hitsPerPage: HITS_PER_PAGE,
      attributesToHighlight: ["*"],
      highlightPreTag: PRE,
      highlightPostTag: POST,
      attributesToCrop: ["*"],
      cropLength: 24,
      filter: filterWithout(null),
    };
    if (state.facetsEnabled) main.facets = ["*"];
    // Each ticked attribute's counts come from a search without its own values ticked, so its other
    // values keep showing how many results ticking them too would add (disjunctive facets).
    const ticked = tickedAttributes();
    const queries = [
      main,
      ...ticked.map((attribute) => ({
        indexUid: state.index,
        q,
        limit: 0,
        facets: [attribute],
        filter: filterWithout(attribute),
      })),
    ];
    let results;
    try {
      results = (await api("POST", "/multi-search", { queries }, controller.signal)).results;
    } catch (error) {
      if (error.name === "AbortError") return;
      if (state.inFlight !== controller) return;
      if (error.code === "invalid_search_facets" && state.facetsEnabled && ticked.length === 0) {
        state.facetsEnabled = false; // nothing filterable in this index: search without facets
        search();
        return;
      }
      clearResults();
      notice(error.message);
      return;
    }
    if (state.inFlight !== controller) return;
    state.inFlight = null;
    notice("");
    const distribution = { ...(results[0].facetDistribution || {}) };
    ticked.forEach((attribute, k) => {
      distribution[attribute] = (results[k + 1].facetDistribution || {})[attribute] || {};
    });
    renderStats(results[0]);
    renderHits(results[0].hits);
    renderFacets(distribution);
    renderPagination(results[0]);
  }

  ui.query.addEventListener("input", () => {
    state.page = 1;
    search();
  });

  // ---- Rendering ------------------------------------------------------------------------------------

  function clearResults() {
    ui.stats.textContent = "";
    ui.hits.replaceChildren();
    ui.facets.replaceChildren();
    ui.pagination.hidden = true;
  }

  function renderStats(result) {
    const total = result.totalHits;
    const noun = total === 1 ? "result" : "results";
    ui.stats.textContent = `${total.toLocaleString("en")} ${noun} in ${result.processingTimeMs} ms`;
  }

  /** Text with the highlight tags turned into <mark> elements; nothing is parsed as HTML. */
  function highlighted(text) {
    const fragment = document.createDocumentFragment();
    const parts = String(text).split(PRE);
    fragment.append(parts[0].replaceAll(POST, ""));
    for (const part of parts.slice(1)) {
      const end = part.indexOf(POST);
      const mark = document.createElement("mark");
      mark.textContent = end === -1 ? part : part.slice(0, end);
      fragment.append(mark);
      if (end !== -1) fragment.append(part.slice(end + 1).replaceAll(POST, ""));
    }
    return fragment;
  }

  function valueNode(value) {
    const node = document.createElement("dd");
    if (Array.isArray(value)) {
      // Items with a highlight first, so a long list shows why the document matched.
      const items = value.map((item) => (typeof item === "string" ? item : JSON.stringify(item)));
      const ordered = [...items.filter((i) => i.includes(PRE)), ...items.filter((i) => !i.includes(PRE))];
      const shown = ordered.slice(0, ARRAY_ITEMS_SHOWN);
      shown.forEach((item, k) => {
        if (k > 0) node.append(", ");
        node.append(highlighted(item));
      });
      if (items.length > shown.length) node.append(` … (+${items.length - shown.length} more)`);
    } else if (value !== null && typeof value === "object") {
      node.append(highlighted(JSON.stringify(value)));
    } else {
      node.append(highlighted(String(value)));
    }
    return node;
  }

  function headingField(document_) {
    for (const name of ["title", "name", "label"]) {
      if (typeof document_[name] === "string") return name;
    }
    return Object.keys(document_).find((name) => typeof document_[name] === "string") || null;
  }

  function renderHits(hits) {
    ui.hits.replaceChildren(
      ...hits.map((hit) => {
        const shown = hit._formatted || hit;
        const item = document.createElement("li");
        item.className = "hit";
        const heading = headingField(shown);
        if (heading) {
          const title = document.createElement("h2");
          title.append(highlighted(shown[heading]));
          item.append(title);
        }
        const fields = document.createElement("dl");
        for (const [name, value] of Object.entries(shown)) {
          if (name === heading || name === "_vectors") continue;
          const term = document.createElement("dt");
          term.textContent = name;
          fields.append(term, valueNode(value));
        }
        item.append(fields);
        return item;
      }),
    );
    if (hits.length === 0) {
      const empty = document.createElement("li");
      empty.className = "empty";
      empty.textContent = "No document matches.";
      ui.hits.append(empty);
    }
  }

  function renderFacets(distribution) {
    const focused = document.activeElement;
    const refocus =
      focused && ui.facets.contains(focused)
        ? { attribute: focused.dataset.attribute, value: focused.dataset.value }
        : null;
    const attributes = Object.keys(distribution).sort();
    if (attributes.length === 0) {
      const note = document.createElement("p");
      note.className = "note";
      note.textContent = state.facetsEnabled
        ? "No facet values among these results."
        : "Nothing is filterable in this index: set filterableAttributes to filter here.";
      ui.facets.replaceChildren(note);
      return;
    }
    ui.facets.replaceChildren(
      ...attributes.map((attribute) => facetGroup(attribute, distribution[attribute])),
    );
    if (refocus) {
      const again = [...ui.facets.querySelectorAll("[data-attribute]")].find(
        (node) => node.dataset.attribute === refocus.attribute && node.dataset.value === refocus.value,
      );
      if (again) again.focus();
    }
  }

  function facetGroup(attribute, counts) {
    const ticked = state.filters.get(attribute) || new Set();
    const values = Object.entries(counts).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    const shown = values.slice(0, FACET_VALUES_SHOWN);
    for (const value of ticked) {
      if (!shown.some(([v]) => v === value)) shown.push([value, counts[value] || 0]);
    }
    const group = document.createElement("details");
    group.className = "facet";
    group.open = state.openFacets.has(attribute) ? state.openFacets.get(attribute) : !NARROW.matches;
    group.addEventListener("toggle", () => state.openFacets.set(attribute, group.open));
    const summary = document.createElement("summary");
    summary.textContent = attribute;
    summary.dataset.attribute = attribute;
    const list = document.createElement("ul");
    for (const [value, count] of shown) {
      const box = document.createElement("input");
      box.type = "checkbox";
      box.checked = ticked.has(value);
      box.dataset.attribute = attribute;
      box.dataset.value = value;
      box.addEventListener("change", () => toggleFacet(attribute, value, box.checked));
      const name = document.createElement("span");
      name.className = "value";
      name.textContent = value;
      const number = document.createElement("span");
      number.className = "count";
      number.textContent = count.toLocaleString("en");
      const label = document.createElement("label");
      label.append(box, name, number);
      const row = document.createElement("li");
      row.append(label);
      list.append(row);
    }
    group.append(summary, list);
    return group;
  }

  function toggleFacet(attribute, value, ticked) {
    if (!state.filters.has(attribute)) state.filters.set(attribute, new Set());
    const values = state.filters.get(attribute);
    if (ticked) values.add(value);
    else values.delete(value);
    state.page = 1;
    search();
  }

  function renderPagination(result) {
    state.totalPages = result.totalPages;
    ui.pagination.hidden = result.totalPages <= 1;
    ui.pageInfo.textContent = `Page ${result.page} of ${result.totalPages}`;
    ui.previous.disabled = result.page <= 1;
    ui.next.disabled = result.page >= result.totalPages;
  }

  function turnPage(step) {
    const page = state.page + step;
    if (page < 1 || page > state.totalPages) return;
    state.page = page;
    search();
    ui.query.scrollIntoView({ block: "nearest" });
  }

  ui.previous.addEventListener("click", () => turnPage(-1));
  ui.next.addEventListener("click", () => turnPage(1));

  // "/" anywhere but in a field jumps to the search box, as on most search pages.
  document.addEventListener("keydown", (event) => {
    const target = event.target;
    const typing = target instanceof HTMLInputElement || target instanceof HTMLSelectElement;
    if (event.key === "/" && !typing && !event.ctrlKey && !event.metaKey && !event.altKey) {
      event.preventDefault();
      ui.query.focus();
    }
  });

  loadIndexes();
})();
