// Product internals the benchmark measures or needs as ground truth, built from
// the same sources as the package (not part of the public API).
export { hashEmbed, HASH_DIMENSION } from "../src/knowledge/embedders/hash.js";
export { embeddingText } from "../src/knowledge/ingest.js";
export { ftsWords } from "../src/knowledge/fts-query.js";
export { ftsQuery } from "../src/storage/sqlite/fts-match.js";
export { createRenderer } from "../src/render/render.js";
