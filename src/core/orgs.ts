import type { ResolvedConfig } from "./config.js";
import { nowIso } from "./clock.js";
import type { OrganizationPatch, OrganizationRecord, OrgStore } from "./storage/index.js";
import { ChatsvcError } from "./errors.js";
import { parse, text } from "./validation.js";
import { z } from "zod";

/** An organisation: the tenant that owns users, keys, chatbots, leads and webhooks. */
export type Organization = OrganizationRecord;

export interface CreateOrganizationInput {
  name: string;
  credits_monthly?: number;
  brand_removal?: boolean;
}

export interface UpdateOrganizationInput extends Partial<CreateOrganizationInput> {
  /** Delete conversations inactive for more than this many days (1 to 36,500); null keeps them forever. */
  retention_days?: number | null;
}

const credits = z
  .number({ error: "The credits monthly field must be an integer." })
  .int({ message: "The credits monthly field must be an integer." })
  .min(0, { message: "The credits monthly field must be at least 0." });
const brand = z.boolean({ error: "The brand removal field must be a boolean." });
const createSchema = z.object({ name: text("name", { min: 1, max: 200 }), credits_monthly: credits.optional(), brand_removal: brand.optional() });
const retention = z
  .number({ error: "The retention days field must be an integer." })
  .int({ message: "The retention days field must be an integer." })
  .min(1, { message: "The retention days field must be between 1 and 36500." })
  .max(36_500, { message: "The retention days field must be between 1 and 36500." });
const updateSchema = createSchema.partial().extend({ retention_days: retention.nullable().optional() });

export type Orgs = ReturnType<typeof createOrgs>;

export function createOrgs(store: OrgStore, config: Pick<ResolvedConfig, "creditsMonthly">) {
  return {
    async create(input: CreateOrganizationInput): Promise<Organization> {
      const data = parse(createSchema, input);
      return store.create({
        name: data.name.trim(),
        credits_monthly: data.credits_monthly ?? config.creditsMonthly,
        brand_removal: data.brand_removal ?? false,
        created_at: nowIso(),
      });
    },

    list(): Promise<Organization[]> {
      return store.list();
    },

    /** The organisation, or undefined. */
    find(id: number): Promise<Organization | undefined> {
      return store.find(id);
    },

    async get(id: number): Promise<Organization> {
      const org = await store.find(id);
      if (!org) throw ChatsvcError.notFound(`Organization ${id} not found`);
      return org;
    },

    async update(id: number, input: UpdateOrganizationInput): Promise<Organization> {
      const data = parse(updateSchema, input);
      const patch: OrganizationPatch = {};
      if (data.name !== undefined) patch.name = data.name.trim();
      if (data.credits_monthly !== undefined) patch.credits_monthly = data.credits_monthly;
      if (data.brand_removal !== undefined) patch.brand_removal = data.brand_removal;
      if (data.retention_days !== undefined) patch.retention_days = data.retention_days;
      if (Object.keys(patch).length === 0) throw ChatsvcError.validation({ body: ["Nothing to update: give a name, credits, brand removal or retention days."] });
      const org = await store.update(id, patch);
      if (!org) throw ChatsvcError.notFound(`Organization ${id} not found`);
      return org;
    },
  };
}
