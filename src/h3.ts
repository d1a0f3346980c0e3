export { createApiApp, apiRoutes, type ApiAppOptions } from "./http/app.js";
export { createConsoleApp, type ConsoleAppOptions } from "./http/console/app.js";
export { createWidgetApp, type WidgetAppOptions, type WidgetConfig } from "./http/widget/app.js";
export type { Envelope, ErrorEnvelope } from "./http/envelope.js";
export { buildOpenApiDocument, type OpenApiDocument, type OpenApiOptions } from "./http/openapi.js";
export { createHealthHandler, HEALTH_PATH } from "./http/health.js";
export type { LogSink } from "./http/logger.js";
