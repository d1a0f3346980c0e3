// The spec's chat flow from the browser, through the backend that keeps the key.
const log = document.getElementById("log");
const form = document.getElementById("form");
const input = document.getElementById("input");

const post = async (path, body) => {
  const res = await fetch(path, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body ?? {}) });
  const data = await res.json();
  if (!res.ok) throw new Error(data.error ?? `HTTP ${res.status}`);
  return data;
};

const bubble = (className) => {
  const el = document.createElement("div");
  el.className = `msg ${className}`;
  log.append(el);
  el.scrollIntoView({ block: "end" });
  return el;
};

// Visitor text is text: textContent never interprets it as HTML.
const say = (text, className) => (bubble(className).textContent = text);

// Replies are sanitised HTML from chatsvc. Insert them unmodified: they carry the required
// attribution element (.svc-branding), which must stay visible.
const showReply = (html) => (bubble("bot").innerHTML = html);

const config = await (await fetch("/chat/config")).json();
document.title = document.getElementById("title").textContent = config.name;
document.documentElement.style.setProperty("--accent", config.color);
input.placeholder = config.placeholder;
say(config.greeting, "bot");
const { token } = await post("/chat/start");

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const message = input.value;
  if (!message.trim()) return;
  input.value = "";
  say(message, "user");
  try {
    showReply((await post("/chat/send", { token, message })).reply);
  } catch (error) {
    say(error.message, "error");
  }
});
addEventListener("pagehide", () => navigator.sendBeacon("/chat/end", new Blob([JSON.stringify({ token })], { type: "application/json" })));
