/** Why one input could not be loaded; reported per input while the rest of the batch goes on. */
export class LoadError extends Error {
  override readonly name = "LoadError";
  /** The HTTP status a web server refused the page with (e.g. 404); undefined for every other failure. */
  readonly status: number | undefined;

  constructor(message: string, status?: number) {
    super(message);
    this.status = status;
  }
}
