import "./console.css";
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { call, whenSignedOut } from "./api.js";
import { Loading } from "./ui.js";
import { SignIn } from "./pages/sign-in.js";
import { OverviewPage } from "./pages/overview.js";
import { ChatbotsPage } from "./pages/chatbots.js";
import { KnowledgePage } from "./pages/knowledge.js";
import { ConversationsPage, TranscriptPage } from "./pages/conversations.js";
import { LeadsPage } from "./pages/leads.js";
import { CorrectionsPage } from "./pages/corrections.js";
import { WebhooksPage } from "./pages/webhooks.js";
import { KeysPage } from "./pages/keys.js";

export interface Me {
  user_id: number;
  organization_id: number;
  organization_name: string | null;
  email: string;
}

const NAV = [
  ["overview", "Overview"],
  ["chatbots", "Chatbots"],
  ["knowledge", "Knowledge"],
  ["conversations", "Conversations"],
  ["leads", "Leads"],
  ["corrections", "Corrections"],
  ["webhooks", "Webhooks"],
  ["keys", "API keys"],
] as const;

/** The route is the URL's hash (`#/keys`), so the server serves one page wherever the console is mounted. */
function useRoute(): string[] {
  const read = () => location.hash.replace(/^#\/?/, "").split("/").filter(Boolean).map(decodeURIComponent);
  const [route, setRoute] = useState(read);
  useEffect(() => {
    const onChange = () => setRoute(read());
    addEventListener("hashchange", onChange);
    return () => removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

function App() {
  const route = useRoute();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  useEffect(() => {
    whenSignedOut(() => setMe(null));
    call<Me>("session").then(
      (r) => setMe(r.data),
      // A refusal of this first check, answered after a link's sign-in finished (it was asked before), must not sign the user out.
      () => setMe((current) => current ?? null),
    );
  }, []);

  if (route[0] === "sign-in" || me === null) {
    return (
      <SignIn
        token={route[0] === "sign-in" ? route[1] : undefined}
        onSignedIn={(user) => {
          setMe(user);
          location.hash = "#/overview";
        }}
      />
    );
  }
  if (me === undefined) return <Loading />;

  const [page = "overview", arg, extra] = route;
  const signOut = async () => {
    await call("session", { method: "DELETE" }).catch(() => {});
    setMe(null);
  };
  return (
    <div class="layout">
      <a class="skip" href="#main" onClick={(e) => (e.preventDefault(), document.getElementById("main")?.focus())}>
        Skip to content
      </a>
      <header class="top">
        <span class="brand">chatsvc</span>
        <nav aria-label="Console">
          <ul>
            {NAV.map(([id, label]) => (
              <li key={id}>
                <a href={`#/${id}`} aria-current={page === id ? "page" : undefined}>
                  {label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span title={me.email}>{me.organization_name ?? `Organisation ${me.organization_id}`}</span>
          <button type="button" class="link" onClick={signOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {page === "overview" && <OverviewPage />}
        {page === "chatbots" && <ChatbotsPage slug={arg} />}
        {page === "knowledge" && <KnowledgePage slug={arg} />}
        {page === "conversations" && (arg ? <TranscriptPage id={Number(arg)} /> : <ConversationsPage />)}
        {page === "leads" && <LeadsPage />}
        {page === "corrections" && <CorrectionsPage slug={arg} highlight={extra ? Number(extra) : undefined} />}
        {page === "webhooks" && <WebhooksPage />}
        {page === "keys" && <KeysPage />}
      </main>
    </div>
  );
}

render(<App />, document.getElementById("app")!);
