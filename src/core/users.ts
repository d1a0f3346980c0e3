import { eq } from "drizzle-orm";
import { z } from "zod";
import { nowIso } from "./clock.js";
import type { Db } from "./db/open.js";
import { organizations, users } from "./db/schema.js";
import { ChatsvcError } from "./errors.js";
import { email, id, parse, text } from "./validation.js";

/** A person of an organisation; API keys belong to users. */
export interface User {
  id: number;
  organization_id: number;
  email: string;
  name: string | null;
  created_at: string;
}

export interface CreateUserInput {
  organization_id: number;
  email: string;
  name?: string;
}

const createSchema = z.object({
  organization_id: id("organization_id"),
  email: email(),
  name: text("name", { max: 200 }).optional(),
});

type Row = typeof users.$inferSelect;

function toUser(row: Row): User {
  return { id: row.id, organization_id: row.organizationId, email: row.email, name: row.name, created_at: row.createdAt };
}

export type Users = ReturnType<typeof createUsers>;

export function createUsers(db: Db) {
  return {
    create(input: CreateUserInput): User {
      const data = parse(createSchema, input);
      const normalized = data.email.trim().toLowerCase();
      return db.transaction(
        (tx) => {
          if (!tx.select({ id: organizations.id }).from(organizations).where(eq(organizations.id, data.organization_id)).get()) {
            throw ChatsvcError.notFound(`Organization ${data.organization_id} not found`);
          }
          if (tx.select({ id: users.id }).from(users).where(eq(users.email, normalized)).get()) {
            throw ChatsvcError.validation({ email: ["The email has already been taken."] });
          }
          const row = tx
            .insert(users)
            .values({ organizationId: data.organization_id, email: normalized, name: data.name?.trim() || null, createdAt: nowIso() })
            .returning()
            .get();
          return toUser(row);
        },
        { behavior: "immediate" },
      );
    },

    list(organizationId?: number): User[] {
      const q = db.select().from(users);
      return (organizationId === undefined ? q : q.where(eq(users.organizationId, organizationId))).orderBy(users.id).all().map(toUser);
    },

    findByEmail(address: string): User | undefined {
      const row = db.select().from(users).where(eq(users.email, address.trim().toLowerCase())).get();
      return row && toUser(row);
    },

    getByEmail(address: string): User {
      const user = this.findByEmail(address);
      if (!user) throw ChatsvcError.notFound(`No user with email ${address}`);
      return user;
    },
  };
}
