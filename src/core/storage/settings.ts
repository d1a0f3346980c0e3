/** Install-wide key-value facts (which embedder built the vectors, the widget signing secret). */
export interface SettingStore {
  get(key: string): Promise<string | undefined>;
  put(key: string, value: string): Promise<void>;
  /**
   * Stores `value` unless the key has one already, and returns the stored value:
   * instances racing on first use all end with the same one.
   */
  putIfAbsent(key: string, value: string): Promise<string>;
}
