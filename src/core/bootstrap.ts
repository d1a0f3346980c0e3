import type { ChatService } from "../service.js";
import type { Chatbot } from "./chatbots.js";
import type { IssuedApiKey } from "./keys.js";
import type { Organization } from "./orgs.js";
import type { User } from "./users.js";

export interface BootstrapOptions {
  organizationName?: string;
  email?: string;
  /** Recorded as the address the attribution obligation was accepted from. */
  ip?: string | null;
}

export interface BootstrapResult {
  organization: Organization;
  user: User;
  chatbot: Chatbot;
  key: IssuedApiKey;
}

/**
 * First-run setup: an organisation, its owner, a `demo` chatbot and one API key
 * (shown once). Whoever runs it accepts the attribution obligation for that key.
 */
export async function bootstrap(
  service: ChatService,
  { organizationName = "My organization", email = "owner@example.com", ip = null }: BootstrapOptions = {},
): Promise<BootstrapResult> {
  const organization = service.orgs.create({ name: organizationName });
  const user = service.users.create({ organization_id: organization.id, email, name: "Owner" });
  const chatbot = service.chatbots.create({
    organization_id: organization.id,
    slug: "demo",
    name: "chatsvc demo",
    display_name: "chatsvc assistant",
    description: "Answers questions about chatsvc from its own documentation.",
    greeting_message: "Hi! I know chatsvc's documentation. Ask me how to install it, manage keys or use the API.",
  });
  const key = service.keys.create({ user_id: user.id, name: "Default key", accept_attribution: true, ip });
  return { organization, user, chatbot, key };
}
