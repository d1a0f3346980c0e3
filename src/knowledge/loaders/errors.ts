/** Why one input could not be loaded; reported per input while the rest of the batch goes on. */
export class LoadError extends Error {
  override readonly name = "LoadError";
}
