import { eq } from "drizzle-orm";
import type { ResolvedConfig } from "../config.js";
import { nowIso } from "./clock.js";
import type { Db } from "./db/open.js";
import { organizations } from "./db/schema.js";
import { ChatsvcError } from "./errors.js";
import { parse, text } from "./validation.js";
import { z } from "zod";

/** An organisation: the tenant that owns users, keys, chatbots, leads and webhooks. */
export interface Organization {
  id: number;
  name: string;
  credits_monthly: number;
  brand_removal: boolean;
  created_at: string;
}

export interface CreateOrganizationInput {
  name: string;
  credits_monthly?: number;
  brand_removal?: boolean;
}

export type UpdateOrganizationInput = Partial<CreateOrganizationInput>;

const credits = z
  .number({ error: "The credits monthly field must be an integer." })
  .int({ message: "The credits monthly field must be an integer." })
  .min(0, { message: "The credits monthly field must be at least 0." });
const brand = z.boolean({ error: "The brand removal field must be a boolean." });
const createSchema = z.object({ name: text("name", { min: 1, max: 200 }), credits_monthly: credits.optional(), brand_removal: brand.optional() });
const updateSchema = createSchema.partial();

type Row = typeof organizations.$inferSelect;

export function toOrganization(row: Row): Organization {
  return {
    id: row.id,
    name: row.name,
    credits_monthly: row.creditsMonthly,
    brand_removal: row.brandRemoval,
    created_at: row.createdAt,
  };
}

export type Orgs = ReturnType<typeof createOrgs>;

export function createOrgs(db: Db, config: ResolvedConfig) {
  const find = (id: number): Row | undefined => db.select().from(organizations).where(eq(organizations.id, id)).get();

  return {
    create(input: CreateOrganizationInput): Organization {
      const data = parse(createSchema, input);
      const row = db
        .insert(organizations)
        .values({
          name: data.name.trim(),
          creditsMonthly: data.credits_monthly ?? config.creditsMonthly,
          brandRemoval: data.brand_removal ?? false,
          createdAt: nowIso(),
        })
        .returning()
        .get();
      return toOrganization(row);
    },

    list(): Organization[] {
      return db.select().from(organizations).orderBy(organizations.id).all().map(toOrganization);
    },

    /** The organisation, or undefined. */
    find(id: number): Organization | undefined {
      const row = find(id);
      return row && toOrganization(row);
    },

    get(id: number): Organization {
      const row = find(id);
      if (!row) throw ChatsvcError.notFound(`Organization ${id} not found`);
      return toOrganization(row);
    },

    update(id: number, input: UpdateOrganizationInput): Organization {
      const data = parse(updateSchema, input);
      const patch: Partial<Row> = {};
      if (data.name !== undefined) patch.name = data.name.trim();
      if (data.credits_monthly !== undefined) patch.creditsMonthly = data.credits_monthly;
      if (data.brand_removal !== undefined) patch.brandRemoval = data.brand_removal;
      if (Object.keys(patch).length === 0) throw ChatsvcError.validation({ body: ["Nothing to update: give a name, credits or brand removal."] });
      const row = db.update(organizations).set(patch).where(eq(organizations.id, id)).returning().get();
      if (!row) throw ChatsvcError.notFound(`Organization ${id} not found`);
      return toOrganization(row);
    },
  };
}
