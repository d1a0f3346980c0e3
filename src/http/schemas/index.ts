export * from "./account.js";
export * from "./chat.js";
export * from "./chatbots.js";
export * from "./common.js";
export * from "./conversations.js";
export * from "./leads.js";
export * from "./webhooks.js";
export * from "./analytics.js";
