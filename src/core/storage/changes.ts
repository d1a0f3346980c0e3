/** What an in-process cache may follow: writes to API keys, to chatbots, to knowledge (documents, chunks, vectors), to settings. */
export type ChangeTopic = "keys" | "chatbots" | "knowledge" | "settings";

/**
 * How caches learn about writes made elsewhere (another connection, process
 * or instance). Synchronous, so a cache can check it on every use without an
 * await: an engine that cannot read it cheaply refreshes it in the background,
 * at least once a second.
 */
export interface ChangeFeed {
  /**
   * A number that differs from the last one read once a write to `topic`,
   * committed by another connection or instance, is visible (within 1 s).
   * Writes made through this storage object need not change it: the caller
   * that makes them drops what they outdate itself. May change for other
   * reasons too (an engine may count all writes as one topic).
   */
  version(topic: ChangeTopic): number;
}
