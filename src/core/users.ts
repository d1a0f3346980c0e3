import { z } from "zod";
import { nowIso } from "./clock.js";
import type { UserRecord, UserStore } from "./storage/index.js";
import { ChatsvcError } from "./errors.js";
import { email, id, parse, text } from "./validation.js";

/** A person of an organisation; API keys belong to users. */
export type User = UserRecord;

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

export type Users = ReturnType<typeof createUsers>;

export function createUsers(store: UserStore) {
  const findByEmail = (address: string): Promise<User | undefined> => store.findByEmail(address.trim().toLowerCase());
  return {
    async create(input: CreateUserInput): Promise<User> {
      const data = parse(createSchema, input);
      const created = await store.create({
        organization_id: data.organization_id,
        email: data.email.trim().toLowerCase(),
        name: data.name?.trim() || null,
        created_at: nowIso(),
      });
      if (created === "no-organization") throw ChatsvcError.notFound(`Organization ${data.organization_id} not found`);
      if (created === "email-taken") throw ChatsvcError.validation({ email: ["The email has already been taken."] });
      return created;
    },

    list(organizationId?: number): Promise<User[]> {
      return store.list(organizationId);
    },

    findByEmail,

    async getByEmail(address: string): Promise<User> {
      const user = await findByEmail(address);
      if (!user) throw ChatsvcError.notFound(`No user with email ${address}`);
      return user;
    },
  };
}
