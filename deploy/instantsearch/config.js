// Where the example searches: Sift's address, a key allowed to `search` the index (a search key, never
// the master key: this file is public), and the index. Edit it, or serve your own beside index.html.
window.SIFT_SEARCH = {
  host: "http://localhost:7700",
  apiKey: "",
  indexUid: "movies",
};
