import { api } from "./chatsvc.mjs";

/** Opens `count` conversations with the `kb` chatbot; returns their ids. */
export async function openConversations(server, count, slug = "kb") {
  const ids = [];
  for (let i = 0; i < count; i++) {
    const { data } = await api(server, `/chatbots/${slug}/conversations`, { method: "POST", json: { visitor_id: `bench-${i}` } });
    ids.push(data.conversation_id);
  }
  return ids;
}

/**
 * autocannon `requests` that cycle through conversations and bodies, so load
 * is spread the way many visitors spread it (not one ever-growing conversation).
 */
export function rotatingPosts(pathOf, ids, bodies) {
  let i = 0;
  return [
    {
      method: "POST",
      setupRequest: (req) => {
        const n = i++;
        return { ...req, path: pathOf(ids[n % ids.length]), body: JSON.stringify(bodies[n % bodies.length]) };
      },
    },
  ];
}
