/*
 * chatsvc chat widget. Embed with:
 *   <script src="https://chat.example.com/widget.js" data-chatbot="<slug>" async></script>
 * Optional: data-open="true" opens the chat on load.
 *
 * Plain browser JavaScript, no framework, no build step: this file is served
 * exactly as written. Everything renders inside a Shadow DOM, so the host
 * page's CSS cannot reach in and ours cannot leak out. No API key is involved:
 * the server checks the page's origin and gives each visitor a token for
 * their one conversation, kept in sessionStorage so a reload resumes it.
 */
(() => {
  "use strict";

  const script = document.currentScript;
  const slug = script && script.dataset.chatbot;
  if (!slug) {
    console.warn('chatsvc widget: add data-chatbot="<chatbot slug>" to the script tag.');
    return;
  }
  const endpoint = `${new URL(".", script.src).href}widget/${encodeURIComponent(slug)}`;
  const registry = (window.__chatsvcWidgets = window.__chatsvcWidgets || {});
  if (registry[endpoint]) return;
  registry[endpoint] = true;
  const startOpen = script.dataset.open === "true";

  // --- Storage: the visitor's token survives reloads of this tab only. ---
  const storeKey = `chatsvc:${endpoint}`;
  const store = {
    get() {
      try {
        return JSON.parse(sessionStorage.getItem(storeKey) || "{}") || {};
      } catch {
        return {};
      }
    },
    set(patch) {
      try {
        sessionStorage.setItem(storeKey, JSON.stringify({ ...store.get(), ...patch }));
      } catch {
        // Storage can be unavailable (private modes, sandboxed frames): the chat still works, it just won't survive a reload.
      }
    },
  };

  // --- Server calls ---
  class WidgetError extends Error {
    constructor(status, message, retryAfter) {
      super(message);
      this.status = status;
      this.retryAfter = retryAfter;
    }
  }

  const toError = (status, envelope, retryAfter) => {
    if (status === 429 && retryAfter > 0) return new WidgetError(status, `You're sending messages too quickly. Please try again in ${retryAfter} s.`, retryAfter);
    return new WidgetError(status, (envelope && envelope.message) || `Request failed (${status || "network"})`, retryAfter);
  };

  /** One request to the widget API; `token` is true for the stored visitor token, or a token string. */
  async function call(method, path, body, { token = false, stream = false } = {}) {
    const headers = { accept: stream ? "text/event-stream" : "application/json" };
    if (body !== undefined) headers["content-type"] = "application/json";
    if (token) headers["x-widget-token"] = (token === true ? store.get().token : token) || "";
    let res;
    try {
      res = await fetch(endpoint + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit", cache: "no-store" });
    } catch {
      throw new WidgetError(0, "Can't reach the chat service. Check your connection and try again.", 0);
    }
    if (stream && res.ok && /event-stream/.test(res.headers.get("content-type") || "")) return res;
    let envelope = null;
    try {
      envelope = await res.json();
    } catch {
      // Not JSON (a proxy's error page, say): the status tells enough.
    }
    if (!res.ok || !envelope || envelope.success === false) throw toError(res.status, envelope, Number(res.headers.get("retry-after")) || 0);
    return envelope;
  }

  /** Server-Sent Events from a fetch body: `{name, data}` per event. */
  async function* events(res) {
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n/g, "\n");
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = "message";
        const data = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
        }
        if (data.length > 0) yield { name, data: JSON.parse(data.join("\n")) };
      }
    }
  }

  // --- DOM helpers: strings always become text nodes, so visitor text is never parsed as HTML. ---
  function h(tag, props, ...children) {
    const el = document.createElement(tag);
    for (const [key, value] of Object.entries(props || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") el.className = value;
      else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
      else el.setAttribute(key, value === true ? "" : String(value));
    }
    for (const child of children.flat()) if (child !== null && child !== undefined && child !== false) el.append(child);
    return el;
  }

  const ICONS = {
    chat: '<path d="M4 5.5A2.5 2.5 0 0 1 6.5 3h11A2.5 2.5 0 0 1 20 5.5v8a2.5 2.5 0 0 1-2.5 2.5H10l-4.2 3.4A.5.5 0 0 1 5 19v-3h.5A1.5 1.5 0 0 1 4 14.5z" fill="currentColor"/>',
    down: '<path d="m6 9 6 6 6-6" stroke="currentColor" stroke-width="2.2" fill="none" stroke-linecap="round" stroke-linejoin="round"/>',
    close: '<path d="M6 6l12 12M18 6 6 18" stroke="currentColor" stroke-width="2" stroke-linecap="round"/>',
    send: '<path d="M4.4 11.2 19 4.6c.6-.3 1.2.3.9.9l-6.6 14.6c-.3.6-1.1.6-1.3 0l-1.9-5.3-5.3-1.9c-.6-.2-.6-1 0-1.3z" fill="currentColor"/>',
    up: '<path d="M7 11v9H4.5A1.5 1.5 0 0 1 3 18.5v-6A1.5 1.5 0 0 1 4.5 11zm2 9h8.2a2 2 0 0 0 2-1.6l1.2-6A2 2 0 0 0 18.4 10H14V6a2 2 0 0 0-2-2l-3 7z" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round"/>',
    contact: '<path d="M4 6.5A1.5 1.5 0 0 1 5.5 5h13A1.5 1.5 0 0 1 20 6.5v11a1.5 1.5 0 0 1-1.5 1.5h-13A1.5 1.5 0 0 1 4 17.5zM4.5 6.5 12 12l7.5-5.5" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linejoin="round"/>',
    restart: '<path d="M4 12a8 8 0 1 0 2.4-5.7M4 4v4h4" fill="none" stroke="currentColor" stroke-width="1.9" stroke-linecap="round" stroke-linejoin="round"/>',
    person: '<circle cx="12" cy="8" r="3.6" fill="none" stroke="currentColor" stroke-width="1.9"/><path d="M5 20c.8-3.6 3.6-5.6 7-5.6s6.2 2 7 5.6" fill="none" stroke="currentColor" stroke-width="1.9" stroke-linecap="round"/>',
  };
  const icon = (name, extra = "") => {
    const span = h("span", { class: `icon ${extra}`, "aria-hidden": "true" });
    span.innerHTML = `<svg viewBox="0 0 24 24" focusable="false">${ICONS[name]}</svg>`;
    return span;
  };

  /** Black or white text, whichever reads better on a hex background. */
  function textOn(hex) {
    const m = /^#?([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(hex || "");
    if (!m) return "#ffffff";
    const full = m[1].length === 3 ? [...m[1]].map((c) => c + c).join("") : m[1];
    const [r, g, b] = [0, 2, 4].map((i) => {
      const c = parseInt(full.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    });
    const luminance = 0.2126 * r + 0.7152 * g + 0.0722 * b;
    return (luminance + 0.05) / 0.05 > 1.05 / (luminance + 0.05) ? "#0f172a" : "#ffffff";
  }

  const safeUrl = (url) => typeof url === "string" && /^(https?:\/\/|data:image\/)/i.test(url);
  const isHttp = (url) => typeof url === "string" && /^https?:\/\//i.test(url);

  // --- The widget ---
  let config;
  let ui;
  let busy = false;
  /** The stored conversation's history being loaded; a message sent meanwhile waits for it. */
  let restoring;
  /** Ids of messages shown, so a poll never shows a reply twice. */
  let shown = new Set();
  /** The newest message id the widget has read from history: polls ask for newer ones. */
  let cursor = 0;

  function build() {
    const a = config.appearance || {};
    const host = h("chatsvc-widget", { "data-chatbot": slug });
    const shadow = host.attachShadow({ mode: "open" });
    shadow.append(h("style", null, CSS));

    const root = h("div", { class: `root ${a.widget_theme === "dark" ? "dark" : "light"}` });
    root.style.setProperty("--primary", a.primary_color || "#2563eb");
    root.style.setProperty("--on-primary", textOn(a.primary_color));
    root.style.setProperty("--bubble", a.bubble_color || a.primary_color || "#2563eb");
    root.style.setProperty("--on-bubble", textOn(a.bubble_color || a.primary_color));
    const name = config.display_name || "Chat";

    const log = h("div", { class: "log", role: "log", "aria-live": "polite", "aria-label": `Conversation with ${name}`, tabindex: "0" });
    const notice = h("p", { class: "notice", role: "status", hidden: true });
    const input = h("textarea", {
      rows: "1",
      placeholder: config.placeholder_text || "Type your message…",
      "aria-label": "Message",
      maxlength: String(config.message_max_chars || 10000),
      enterkeyhint: "send",
    });
    const sendButton = h("button", { type: "submit", class: "send", "aria-label": "Send message", disabled: true }, icon("send"));
    const composer = h("form", { class: "composer", onsubmit: (e) => (e.preventDefault(), submit()) }, input, sendButton);

    const headerButton = (label, iconName, onclick) => h("button", { type: "button", class: "icon-btn", "aria-label": label, title: label, onclick }, icon(iconName));
    const panel = h(
      "section",
      { class: "panel", id: "chatsvc-panel", role: "dialog", "aria-label": `Chat with ${name}`, hidden: true },
      h(
        "header",
        null,
        safeUrl(a.profile_image) ? h("img", { class: "avatar", src: a.profile_image, alt: "" }) : null,
        h("div", { class: "title" }, h("strong", null, name), h("span", { class: "status" }, "Online · replies instantly")),
        config.handoff_enabled ? headerButton("Talk to a person", "person", () => askForPerson()) : null,
        headerButton("Leave your contact details", "contact", () => openLeadForm()),
        headerButton("Start a new conversation", "restart", () => restart()),
        headerButton("Close chat", "close", () => close(true)),
      ),
      log,
      notice,
      composer,
    );

    const launcher = h(
      "button",
      { type: "button", class: "launcher", "aria-label": `Open chat with ${name}`, "aria-expanded": "false", "aria-controls": "chatsvc-panel", onclick: () => (panel.hidden ? open(true) : close(true)) },
      safeUrl(a.chat_icon) ? h("img", { src: a.chat_icon, alt: "" }) : icon("chat", "when-closed"),
      icon("down", "when-open"),
    );

    const teaserVisible = a.show_bubble_message !== false && a.bubble_message && !store.get().teaserDismissed;
    const teaser = h(
      "div",
      { class: "teaser", hidden: !teaserVisible },
      h("button", { type: "button", class: "teaser-text", onclick: () => open(true) }, a.bubble_message || ""),
      h("button", { type: "button", class: "teaser-close", "aria-label": "Dismiss", onclick: () => dismissTeaser() }, icon("close")),
    );

    input.addEventListener("input", () => {
      input.style.height = "auto";
      input.style.height = `${Math.min(input.scrollHeight, 120)}px`;
      sendButton.disabled = busy || input.value.trim() === "";
    });
    input.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        submit();
      }
    });
    root.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && !panel.hidden) close(true);
    });

    root.append(teaser, panel, launcher);
    shadow.append(root);
    (document.body || document.documentElement).append(host);
    showGreeting(log);
    return { root, panel, launcher, teaser, log, notice, input, sendButton };
  }

  function dismissTeaser() {
    ui.teaser.hidden = true;
    store.set({ teaserDismissed: true });
  }

  function open(focus) {
    ui.panel.hidden = false;
    ui.teaser.hidden = true;
    ui.root.classList.add("open");
    ui.launcher.setAttribute("aria-expanded", "true");
    ui.launcher.setAttribute("aria-label", "Minimise chat");
    store.set({ open: true });
    restoring = restoring || restore();
    restoring.then(() => watch());
    scrollDown(true);
    if (focus) ui.input.focus();
  }

  function close(focusLauncher) {
    ui.panel.hidden = true;
    ui.root.classList.remove("open");
    ui.launcher.setAttribute("aria-expanded", "false");
    ui.launcher.setAttribute("aria-label", `Open chat with ${config.display_name || "us"}`);
    store.set({ open: false });
    stopWatching();
    if (focusLauncher) ui.launcher.focus();
  }

  function scrollDown(force) {
    const log = ui.log;
    if (force || log.scrollHeight - log.scrollTop - log.clientHeight < 120) log.scrollTop = log.scrollHeight;
  }

  let noticeTimer;
  function showNotice(text) {
    ui.notice.textContent = text;
    ui.notice.hidden = false;
    clearTimeout(noticeTimer);
    noticeTimer = setTimeout(() => (ui.notice.hidden = true), 6000);
  }

  function showGreeting(log) {
    if (config.greeting_message) log.append(h("div", { class: "msg bot" }, h("div", { class: "bubble plain" }, config.greeting_message)));
  }

  function forget() {
    store.set({ token: null, conversationId: null, leadSent: false });
    stopWatching();
    shown = new Set();
    cursor = 0;
    setHuman(false);
  }

  /** Says in the header who answers: the bot at once, or a person later. */
  function setHuman(value) {
    if (ui) ui.root.querySelector(".status").textContent = value ? "A person will reply here" : "Online · replies instantly";
  }

  /** A message of the service's side from history: a person's (`agent`) or the bot's. */
  function showMessage(message, conversationId) {
    shown.add(message.id);
    if (message.role === "agent") addAgent(message);
    else addAssistant().finish({ reply: message.content, message_id: message.id, sources: message.sources, conversation_id: conversationId });
  }

  // --- Watching for a person's replies while the panel is open: a short poll for newer messages,
  // only while the panel is open and the page visible, slower after errors, and stopping after
  // IDLE_STOP_MS without news (sending or reopening starts it again). ---
  const POLL_MS = 1500;
  const MAX_POLL_MS = 30000;
  const IDLE_STOP_MS = 10 * 60 * 1000;
  let pollTimer = null;
  let pollDelay = POLL_MS;
  let lastNews = 0;

  function stopWatching() {
    clearTimeout(pollTimer);
    pollTimer = null;
  }

  /** (Re)starts watching: called on opening the panel and after each message the visitor sends. */
  function watch() {
    lastNews = Date.now();
    pollDelay = POLL_MS;
    schedulePoll();
  }

  function schedulePoll() {
    stopWatching();
    if (!ui || ui.panel.hidden || document.hidden || !store.get().token) return;
    if (Date.now() - lastNews > IDLE_STOP_MS) return;
    pollTimer = setTimeout(poll, pollDelay);
  }

  async function poll() {
    pollTimer = null;
    const { conversationId } = store.get();
    if (!busy && conversationId) {
      try {
        const { data } = await call("GET", `/conversations/${conversationId}?after=${cursor}`, undefined, { token: true });
        pollDelay = POLL_MS;
        // A reply streaming meanwhile arrives through its own answer: this read may predate it.
        if (!busy && store.get().conversationId === conversationId) {
          for (const message of data.messages) {
            cursor = Math.max(cursor, message.id);
            // The visitor's own messages are on screen already.
            if (message.role === "user" || shown.has(message.id)) continue;
            showMessage(message, data.id);
            lastNews = Date.now();
          }
          if (data.is_ended) return;
          setHuman(data.status === "human");
        }
      } catch (error) {
        if (error.status === 401 || error.status === 404) return;
        pollDelay = Math.min(pollDelay * 2, MAX_POLL_MS);
      }
    }
    schedulePoll();
  }

  document.addEventListener("visibilitychange", () => (document.hidden ? stopWatching() : schedulePoll()));

  /** The visitor asks for a person: the bot stops answering and a person replies here. */
  async function askForPerson() {
    try {
      const id = await conversation();
      await call("POST", `/conversations/${id}/handoff`, {}, { token: true });
      setHuman(true);
      ui.log.append(note("We've asked a person to join. They'll reply here."));
      scrollDown(true);
      watch();
    } catch (error) {
      showNotice(error.message);
    }
  }

  const note = (text) => h("p", { class: "note", role: "status" }, text);

  /** A person's reply: sanitised HTML from the server, with their name; never branded, not rated. */
  function addAgent(message) {
    const bubble = h("div", { class: "bubble content" });
    // Sanitised on the server, like the bot's replies.
    bubble.innerHTML = message.content;
    ui.log.append(h("div", { class: "msg bot agent" }, h("span", { class: "who" }, message.agent_name || "Support team"), bubble));
    scrollDown(false);
  }

  /** Shows the stored conversation's history, or forgets a conversation that is gone. */
  async function restore() {
    const { token, conversationId } = store.get();
    if (!token) return;
    try {
      const { data } = await call("GET", `/conversations/${conversationId}`, undefined, { token: true });
      if (data.is_ended) return forget();
      for (const message of data.messages) {
        cursor = Math.max(cursor, message.id);
        if (message.role === "user") addUser(message.content);
        else showMessage(message, data.id);
      }
      setHuman(data.status === "human");
      scrollDown(true);
    } catch (error) {
      if (error.status === 401 || error.status === 404) forget();
      else showNotice(error.message);
    }
  }

  async function conversation() {
    const stored = store.get();
    if (stored.token) return stored.conversationId;
    const { data } = await call("POST", "/conversations", { page_url: location.href });
    store.set({ token: data.token, conversationId: data.conversation_id, leadSent: false });
    return data.conversation_id;
  }

  function addUser(text) {
    ui.log.append(h("div", { class: "msg user" }, h("div", { class: "bubble" }, text)));
    scrollDown(true);
  }

  /** An assistant message that fills in as the reply streams, then shows the final HTML. */
  function addAssistant() {
    const bubble = h("div", { class: "bubble content", "aria-busy": "true" }, h("span", { class: "typing", "aria-label": "Typing" }, h("span"), h("span"), h("span")));
    const message = h("div", { class: "msg bot" }, bubble);
    ui.log.append(message);
    scrollDown(true);
    let streamed = "";
    return {
      delta(text) {
        streamed += text;
        bubble.classList.add("streaming");
        bubble.textContent = streamed;
        scrollDown(false);
      },
      /** No reply: a person will answer (their reply comes through polling). */
      handedOff() {
        message.replaceWith(note("Sent. A person will reply here."));
        setHuman(true);
      },
      finish(reply) {
        if (reply.message_id) shown.add(reply.message_id);
        bubble.classList.remove("streaming");
        bubble.removeAttribute("aria-busy");
        // Sanitised on the server; inserted unmodified so the branding element stays exactly as sent.
        bubble.innerHTML = reply.reply;
        message.append(meta(reply));
        if (reply.cannot_answer && !store.get().leadSent) message.append(leadOffer());
        scrollDown(false);
      },
      fail(text) {
        bubble.classList.remove("streaming");
        bubble.removeAttribute("aria-busy");
        bubble.classList.add("error");
        bubble.setAttribute("role", "alert");
        bubble.textContent = text;
      },
    };
  }

  function meta(reply) {
    const seen = new Set();
    const sources = (reply.sources || []).filter((s) => s && s.name && !seen.has(s.name) && seen.add(s.name)).slice(0, 5);
    const row = h("div", { class: "meta" });
    row.append(h("div", { class: "rating" }, rateButton("good", "Helpful", ""), rateButton("bad", "Not helpful", "flip")));
    if (sources.length > 0) {
      row.append(
        h(
          "div",
          { class: "sources", role: "group", "aria-label": "Sources" },
          sources.map((s) =>
            s.type === "url" && isHttp(s.url)
              ? h("a", { class: "source", href: s.url, target: "_blank", rel: "noopener noreferrer", title: s.url }, s.name)
              : h("span", { class: "source", title: s.name }, s.title ? `${s.title} (${s.name})` : s.name),
          ),
        ),
      );
    }
    function rateButton(rating, label, extra) {
      const button = h("button", { type: "button", class: `rate ${extra}`, "aria-label": label, title: label, "aria-pressed": "false" }, icon("up"));
      button.addEventListener("click", async () => {
        try {
          await call("POST", `/conversations/${reply.conversation_id}/messages/rate`, { message_id: reply.message_id, rating }, { token: true });
          for (const b of row.querySelectorAll(".rate")) b.setAttribute("aria-pressed", String(b === button));
        } catch (error) {
          showNotice(error.message);
        }
      });
      return button;
    }
    return row;
  }

  function leadOffer() {
    const row = h("div", { class: "chip-row" });
    row.append(h("button", { type: "button", class: "chip", onclick: () => (row.remove(), openLeadForm()) }, "Leave my contact details"));
    return row;
  }

  function openLeadForm() {
    const existing = ui.log.querySelector(".lead");
    if (existing) return existing.querySelector("input").focus();
    const field = (label, name, type, autocomplete, maxlength) =>
      h("label", null, label, h("input", { name, type, autocomplete, maxlength: String(maxlength) }));
    const error = h("p", { class: "lead-error", role: "alert", hidden: true });
    const submitButton = h("button", { type: "submit", class: "btn primary" }, "Send");
    const form = h(
      "form",
      { class: "lead", "aria-label": "Your contact details", novalidate: true },
      h("p", { class: "lead-title" }, "Leave your details and we'll get back to you."),
      field("Name", "name", "text", "name", 255),
      field("Email", "email", "email", "email", 255),
      field("Phone", "phone", "tel", "tel", 50),
      error,
      h("div", { class: "lead-actions" }, h("button", { type: "button", class: "btn", onclick: () => form.remove() }, "Not now"), submitButton),
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const values = Object.fromEntries(["name", "email", "phone"].map((n) => [n, form.elements[n].value.trim()]));
      if (!values.name && !values.email && !values.phone) {
        error.textContent = "Please fill in at least your name, email or phone.";
        error.hidden = false;
        return;
      }
      submitButton.disabled = true;
      try {
        const id = await conversation();
        await call("POST", `/conversations/${id}/leads`, values, { token: true });
        store.set({ leadSent: true });
        form.replaceWith(h("div", { class: "msg bot" }, h("div", { class: "bubble plain lead-thanks" }, `Thanks${values.name ? `, ${values.name}` : ""}! We'll be in touch soon.`)));
        scrollDown(true);
      } catch (err) {
        error.textContent = err.message;
        error.hidden = false;
        submitButton.disabled = false;
      }
    });
    ui.log.append(form);
    scrollDown(true);
    form.querySelector("input").focus();
  }

  async function restart() {
    const { token, conversationId } = store.get();
    forget();
    if (token) call("POST", `/conversations/${conversationId}/end`, undefined, { token }).catch(() => {});
    ui.log.replaceChildren();
    showGreeting(ui.log);
    ui.input.focus();
  }

  async function submit() {
    const text = ui.input.value.trim();
    if (busy || text === "") return;
    busy = true;
    ui.input.value = "";
    ui.input.style.height = "auto";
    ui.sendButton.disabled = true;
    await restoring;
    addUser(text);
    const reply = addAssistant();
    try {
      await streamAnswer(text, reply, true);
    } catch (error) {
      reply.fail(error.message);
    } finally {
      busy = false;
      ui.sendButton.disabled = ui.input.value.trim() === "";
      watch();
    }
  }

  async function streamAnswer(text, reply, retry) {
    const id = await conversation();
    let res;
    try {
      res = await call("POST", `/conversations/${id}/messages`, { message: text }, { token: true, stream: true });
    } catch (error) {
      // A stored conversation that expired, ended or vanished: start a new one, once.
      if (retry && (error.status === 401 || error.status === 404 || error.status === 400)) {
        forget();
        return streamAnswer(text, reply, false);
      }
      throw error;
    }
    for await (const event of events(res)) {
      if (event.name === "delta") reply.delta(event.data.text);
      else if (event.name === "done") return event.data.data.handled_by === "human" ? reply.handedOff() : reply.finish(event.data.data);
      else if (event.name === "error") throw toError(event.data.status || 500, event.data, 0);
    }
    throw new WidgetError(0, "The answer was interrupted. Please try again.", 0);
  }

  const CSS = `
:host { all: initial; }
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
.root {
  --primary: #2563eb; --on-primary: #fff; --bubble: #2563eb; --on-bubble: #fff;
  --bg: #ffffff; --surface: #f1f5f9; --fg: #0f172a; --muted: #64748b; --line: #e2e8f0; --bot: #f1f5f9; --link: var(--primary);
  --shadow: 0 24px 60px rgba(15, 23, 42, .20), 0 6px 16px rgba(15, 23, 42, .10);
  position: fixed; right: 20px; bottom: 20px; z-index: 2147483000;
  display: flex; flex-direction: column; align-items: flex-end; gap: 14px;
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif;
  color: var(--fg); text-align: left; -webkit-font-smoothing: antialiased;
}
.root.dark { --bg: #0f172a; --surface: #1e293b; --fg: #e2e8f0; --muted: #94a3b8; --line: #263449; --bot: #1e293b; --link: #93c5fd; }
button { font: inherit; color: inherit; cursor: pointer; }
:focus-visible { outline: 2px solid var(--primary); outline-offset: 2px; }
.icon { display: inline-flex; }
.icon svg { width: 100%; height: 100%; }

.launcher { width: 60px; height: 60px; padding: 0; border: 0; border-radius: 50%; background: var(--bubble); color: var(--on-bubble);
  box-shadow: 0 10px 28px rgba(15, 23, 42, .28); display: grid; place-items: center; overflow: hidden; transition: transform .15s ease; }
.launcher:hover { transform: scale(1.06); }
.launcher > * { grid-area: 1 / 1; }
.launcher .icon { width: 30px; height: 30px; }
.launcher img { width: 100%; height: 100%; object-fit: cover; }
.launcher .when-open, .open .launcher .when-closed, .open .launcher img { display: none; }
.open .launcher .when-open { display: inline-flex; }

.teaser { display: flex; align-items: flex-start; gap: 2px; max-width: 270px; padding: 12px 8px 12px 16px; background: var(--bg); color: var(--fg);
  border: 1px solid var(--line); border-radius: 16px 16px 4px 16px; box-shadow: var(--shadow); animation: rise .3s ease both; }
.teaser-text { border: 0; background: none; padding: 0; text-align: left; font-size: 14px; line-height: 1.45; }
.teaser-close { flex: none; width: 22px; height: 22px; padding: 4px; border: 0; border-radius: 50%; background: none; color: var(--muted); display: grid; place-items: center; }
.teaser-close:hover { background: var(--surface); color: var(--fg); }

.panel { width: 380px; height: min(640px, calc(100vh - 120px)); display: flex; flex-direction: column; overflow: hidden;
  background: var(--bg); border: 1px solid var(--line); border-radius: 20px; box-shadow: var(--shadow); animation: rise .22s ease both; }
header { flex: none; display: flex; align-items: center; gap: 12px; padding: 14px 10px 14px 16px; background: var(--primary); color: var(--on-primary); }
.avatar { flex: none; width: 40px; height: 40px; border-radius: 50%; object-fit: cover; box-shadow: 0 0 0 2px rgba(255, 255, 255, .45); }
.title { flex: 1; min-width: 0; display: flex; flex-direction: column; line-height: 1.3; }
.title strong { font-size: 15px; font-weight: 650; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.status { display: flex; align-items: center; gap: 6px; font-size: 12px; opacity: .88; }
.status::before { content: ""; width: 7px; height: 7px; border-radius: 50%; background: #4ade80; box-shadow: 0 0 0 2px rgba(74, 222, 128, .25); }
.icon-btn { flex: none; width: 34px; height: 34px; padding: 8px; border: 0; border-radius: 10px; background: transparent; color: inherit; display: grid; place-items: center; }
.icon-btn:hover { background: rgba(127, 127, 127, .22); }
.icon-btn .icon { width: 18px; height: 18px; }

.log { flex: 1; overflow-y: auto; overscroll-behavior: contain; padding: 18px 16px; display: flex; flex-direction: column; gap: 14px; }
.log:focus-visible { outline-offset: -2px; }
.msg { display: flex; flex-direction: column; max-width: 86%; }
.msg.user { align-self: flex-end; align-items: flex-end; }
.msg.bot { align-self: flex-start; }
.bubble { padding: 10px 14px; border-radius: 18px; overflow-wrap: anywhere; }
.user .bubble { background: var(--primary); color: var(--on-primary); border-bottom-right-radius: 6px; white-space: pre-wrap; }
.bot .bubble { background: var(--bot); color: var(--fg); border-bottom-left-radius: 6px; }
.bubble.plain, .bubble.streaming { white-space: pre-wrap; }
.bubble.error { background: #fef2f2; color: #991b1b; }
.content > :first-child { margin-top: 0; }
.content > :last-child { margin-bottom: 0; }
.content p, .content ul, .content ol, .content pre, .content blockquote, .content table { margin: 0 0 8px; }
.content ul, .content ol { padding-left: 20px; }
.content li + li { margin-top: 2px; }
.content h1, .content h2, .content h3, .content h4, .content h5, .content h6 { font-size: 15px; margin: 10px 0 4px; }
.content a { color: var(--link); text-underline-offset: 2px; }
.content code { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: rgba(127, 127, 127, .16); padding: 1px 5px; border-radius: 5px; }
.content pre { background: #0f172a; color: #e2e8f0; padding: 10px 12px; border-radius: 10px; overflow-x: auto; }
.content pre code { background: none; padding: 0; }
.content blockquote { border-left: 3px solid var(--line); padding-left: 10px; color: var(--muted); }
.content img { max-width: 100%; height: auto; }
.content table { border-collapse: collapse; display: block; overflow-x: auto; }
.content th, .content td { border: 1px solid var(--line); padding: 4px 8px; }
.svc-branding { display: block; margin-top: 10px; padding-top: 8px; border-top: 1px solid var(--line); font-size: 11.5px; line-height: 1.4; }
.svc-branding a { display: inline-flex; align-items: center; gap: 6px; color: var(--muted); text-decoration: none; }
.svc-branding a:hover { color: var(--fg); }
.svc-branding img { width: 14px; height: 14px; border-radius: 3px; }

.typing { display: inline-flex; gap: 4px; padding: 5px 2px; }
.typing span { width: 7px; height: 7px; border-radius: 50%; background: var(--muted); animation: blink 1.2s infinite ease-in-out both; }
.typing span:nth-child(2) { animation-delay: .15s; }
.typing span:nth-child(3) { animation-delay: .3s; }

.meta { display: flex; align-items: center; flex-wrap: wrap; gap: 6px 10px; margin-top: 6px; padding-left: 2px; }
.sources { display: flex; flex-wrap: wrap; gap: 6px; font-size: 12px; }
.source { max-width: 190px; padding: 2px 9px; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; color: var(--muted); background: var(--bg);
  border: 1px solid var(--line); border-radius: 999px; text-decoration: none; }
a.source:hover { color: var(--link); border-color: currentColor; }
.rating { display: flex; gap: 2px; }
.rate { width: 28px; height: 28px; padding: 6px; border: 0; border-radius: 8px; background: transparent; color: var(--muted); display: grid; place-items: center; }
.rate:hover { background: var(--surface); color: var(--fg); }
.rate[aria-pressed="true"] { color: var(--primary); background: var(--surface); }
.rate.flip .icon { transform: rotate(180deg); }
.rate .icon { width: 16px; height: 16px; }

.agent .who { font-size: 11.5px; font-weight: 600; color: var(--muted); margin: 0 0 3px 4px; }
.note { align-self: center; margin: 0; padding: 4px 12px; font-size: 12.5px; color: var(--muted); background: var(--surface); border-radius: 999px; text-align: center; }

.chip-row { display: flex; gap: 6px; margin-top: 8px; }
.chip { padding: 6px 14px; border: 1px solid var(--primary); border-radius: 999px; background: transparent; color: var(--link); font-size: 13px; font-weight: 550; }
.chip:hover { background: var(--primary); color: var(--on-primary); }

.lead { align-self: stretch; display: flex; flex-direction: column; gap: 10px; padding: 16px; background: var(--bg); border: 1px solid var(--line);
  border-radius: 16px; box-shadow: 0 4px 14px rgba(15, 23, 42, .07); animation: rise .2s ease both; }
.lead-title { margin: 0; font-weight: 600; }
.lead label { display: flex; flex-direction: column; gap: 4px; font-size: 12px; font-weight: 500; color: var(--muted); }
.lead input { font: inherit; font-size: 14px; color: var(--fg); background: var(--surface); border: 1px solid var(--line); border-radius: 10px; padding: 8px 10px; }
.lead input:focus { outline: 2px solid var(--primary); outline-offset: -1px; background: var(--bg); }
.lead-error { margin: 0; color: #dc2626; font-size: 13px; font-weight: 500; }
.lead-actions { display: flex; justify-content: flex-end; gap: 8px; }
.btn { padding: 8px 16px; border: 1px solid var(--line); border-radius: 10px; background: transparent; font-size: 13px; font-weight: 600; }
.btn.primary { background: var(--primary); border-color: var(--primary); color: var(--on-primary); }
.btn:disabled { opacity: .6; cursor: default; }

.notice { margin: 0 16px 8px; padding: 6px 10px; border-radius: 8px; background: #fef2f2; color: #b91c1c; font-size: 12.5px; }

.composer { flex: none; display: flex; align-items: flex-end; gap: 8px; padding: 12px; border-top: 1px solid var(--line); background: var(--bg); }
.composer textarea { flex: 1; min-height: 44px; max-height: 120px; resize: none; padding: 11px 14px; font: inherit; line-height: 1.4; color: var(--fg);
  background: var(--surface); border: 1px solid transparent; border-radius: 14px; }
.composer textarea::placeholder { color: var(--muted); }
.composer textarea:focus { outline: 2px solid var(--primary); outline-offset: -1px; background: var(--bg); }
.send { flex: none; width: 44px; height: 44px; padding: 12px; border: 0; border-radius: 14px; background: var(--primary); color: var(--on-primary); display: grid; place-items: center; transition: opacity .15s; }
.send:disabled { opacity: .4; cursor: default; }
.send .icon { width: 20px; height: 20px; }

@keyframes rise { from { opacity: 0; transform: translateY(10px); } to { opacity: 1; transform: none; } }
@keyframes blink { 0%, 80%, 100% { opacity: .3; transform: scale(.8); } 40% { opacity: 1; transform: none; } }
@media (prefers-reduced-motion: reduce) { *, *::before, *::after { animation: none !important; transition: none !important; } }
@media (max-width: 480px) {
  .root { right: 14px; bottom: 14px; }
  .root.open { inset: 0; gap: 0; }
  .root.open .panel { width: 100%; height: 100%; flex: 1; border: 0; border-radius: 0; }
  .root.open .launcher { display: none; }
}
`;

  call("GET", "/config")
    .then((envelope) => {
      config = envelope.data;
      ui = build();
      if (store.get().open || startOpen) open(false);
    })
    .catch((error) => {
      // A refused origin gets no CORS grant, which the browser reports like a network failure.
      const hint = error.status === 0 ? ` If the service is up, allow this site's origin (${location.origin}) for the chatbot: chatsvc bots update ${slug} --allowed-origins ${location.origin}` : "";
      console.warn(`chatsvc widget (${slug}) not shown: ${error.message}${hint}`);
    });
})();
