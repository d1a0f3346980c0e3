import { z } from "zod";
import { integer } from "./common.js";

/** `GET /auth/test` data: the account the key belongs to. */
export interface AccountInfo {
  user_id: number;
  organization_id: number;
  email: string;
}

export const accountInfoSchema = z
  .strictObject({ user_id: integer, organization_id: integer, email: z.string() })
  .meta({ id: "AccountInfo", description: "The account the API key belongs to" }) satisfies z.ZodType<AccountInfo>;
