import { z } from "zod";
import type { Branding } from "../../core/branding.js";
import type { Appearance, ChatbotDetail, ChatbotListItem } from "../../core/chatbots.js";
import type { WidgetBudget } from "../../core/widget-budgets.js";
import { integer, timestamp } from "./common.js";

export const chatbotListItemSchema = z
  .strictObject({
    id: integer,
    slug: z.string(),
    name: z.string(),
    description: z.string(),
    language: z.string().meta({ description: "Language code, e.g. `en`" }),
    is_active: z.boolean(),
    created_at: timestamp,
  })
  .meta({ id: "Chatbot" }) satisfies z.ZodType<ChatbotListItem>;

export const appearanceSchema = z
  .strictObject({
    primary_color: z.string().meta({ description: "Hex colour: send button, header, user bubbles" }),
    bubble_color: z.string().meta({ description: "Hex colour of the floating launcher" }),
    widget_theme: z.enum(["light", "dark"]),
    profile_image: z.string().meta({ description: "Bot avatar URL" }),
    chat_icon: z.string().nullable(),
    bubble_message: z.string().meta({ description: "Launcher teaser text" }),
    show_bubble_message: z.boolean(),
  })
  .meta({ id: "Appearance" }) satisfies z.ZodType<Appearance>;

export const brandingSchema = z
  .strictObject({
    required: z.boolean().meta({ description: "True while the brand-removal add-on is not purchased: replies then carry the branding element" }),
    text: z.string(),
    url: z.string(),
    icon_url: z.string(),
  })
  .meta({ id: "Branding" }) satisfies z.ZodType<Branding>;

export const chatbotDetailSchema = chatbotListItemSchema
  .extend({
    display_name: z.string(),
    greeting_message: z.string(),
    fallback_message: z.string(),
    placeholder_text: z.string(),
    has_knowledge_base: z.boolean(),
    appearance: appearanceSchema,
    branding: brandingSchema,
    handoff_enabled: z.boolean().meta({ description: "Whether visitors may ask for a person: show a button for it (the widget does)" }),
  })
  .meta({ id: "ChatbotDetail", description: "A chatbot's configuration" }) satisfies z.ZodType<ChatbotDetail>;

export const chatbotListMetaSchema = z.strictObject({ total: integer });

const budgetLimits = <T extends z.ZodType>(value: T, description: string) =>
  z.strictObject({
    visitor_per_day: value.meta({ description: `Widget messages one visitor (client IP) may send per UTC day; ${description}` }),
    chatbot_per_hour: value.meta({ description: `Widget messages the chatbot answers per UTC hour, all visitors together; ${description}` }),
    chatbot_per_day: value.meta({ description: `Widget messages the chatbot answers per UTC day, all visitors together; ${description}` }),
  });

export const widgetBudgetResponseSchema = z
  .strictObject({
    limits: budgetLimits(integer.min(0), "0 means no limit"),
    overrides: budgetLimits(integer.min(0).nullable(), "null means the server's default"),
  })
  .meta({ id: "WidgetBudget", description: "The limits in force and the chatbot's own settings" }) satisfies z.ZodType<WidgetBudget>;
