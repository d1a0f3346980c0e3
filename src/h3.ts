export { createApiApp, apiRoutes, type ApiAppOptions } from "./http/app.js";
export type { Envelope, ErrorEnvelope } from "./http/envelope.js";
