/** The obligation a key's creator accepts (spec: Attribution requirement). Kept apart so the CLI can print it without loading storage. */
export const ATTRIBUTION_NOTICE =
  "While branding is required for your account, every AI reply and every assistant message in history contains a " +
  "branding element (CSS class svc-branding). You must render reply HTML unmodified and must not remove, hide, strip " +
  "or suppress that element or any of its ancestors. Only the brand-removal add-on lifts this obligation.";
