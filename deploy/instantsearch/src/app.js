// InstantSearch on Sift: the Meilisearch adapter talks to Sift's API unchanged. Bundled into
// dist/app.js by `npm run build` (see README.md beside this file); config.js says where Sift runs.
import { instantMeiliSearch } from "@meilisearch/instant-meilisearch";
import instantsearch from "instantsearch.js";
import { configure, hits, pagination, refinementList, searchBox, stats } from "instantsearch.js/es/widgets";

const settings = { host: "http://localhost:7700", apiKey: "", indexUid: "movies", ...window.SIFT_SEARCH };
const { searchClient } = instantMeiliSearch(settings.host, settings.apiKey);

const search = instantsearch({
  indexName: settings.indexUid,
  searchClient,
  future: { preserveSharedStateOnUnmount: true },
});

search.addWidgets([
  configure({ hitsPerPage: 6, attributesToSnippet: ["overview:30"], snippetEllipsisText: "…" }),
  searchBox({ container: "#searchbox", placeholder: "Search movies…", showLoadingIndicator: false }),
  stats({ container: "#stats" }),
  refinementList({ container: "#genres", attribute: "genres", limit: 12 }),
  hits({
    container: "#hits",
    templates: {
      item: (hit, { html, components }) => html`
        <article>
          <h2>${components.Highlight({ hit, attribute: "title" })}</h2>
          <p class="genres">${(hit.genres || []).join(", ")}</p>
          <p>${components.Snippet({ hit, attribute: "overview" })}</p>
        </article>
      `,
      empty: (results, { html }) => html`<p>No movie matches “${results.query}”.</p>`,
    },
  }),
  pagination({ container: "#pagination", padding: 2 }),
]);

// Sift's refusals (a missing or wrong key, an unknown index) are shown, not only thrown to the console.
const problem = document.getElementById("problem");
search.on("error", ({ error }) => {
  problem.textContent = error.message;
  problem.hidden = false;
});
search.on("render", () => {
  if (search.status === "idle" && !search.error) problem.hidden = true;
});

search.start();
