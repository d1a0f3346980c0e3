/**
 * The text of a PDF, a paragraph per page. unpdf (a maintained, dependency-free
 * build of PDF.js) is imported on first use so that the CLI starts fast.
 *
 * @example
 * const text = await pdfToText(readFileSync("guide.pdf"));
 */
export async function pdfToText(bytes: Uint8Array): Promise<string> {
  const { getDocumentProxy, extractText } = await import("unpdf");
  // PDF.js takes ownership of the buffer it is given: hand it a copy.
  const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  try {
    const { text } = await extractText(pdf, { mergePages: false });
    return text.map((page) => page.trim()).filter(Boolean).join("\n\n");
  } finally {
    await pdf.destroy();
  }
}
