export { createApiApp, apiRoutes, type ApiAppOptions } from "./http/app.js";
export { createWidgetApp, type WidgetAppOptions, type WidgetConfig } from "./widget/app.js";
export type { Envelope, ErrorEnvelope } from "./http/envelope.js";
