/**
 * Documents split into passages (R-X4): by Markdown heading, then by paragraph, each at most
 * {@link PASSAGE_MAX_CHARS} characters (a longer paragraph is cut at sentence ends). A passage keeps the
 * path of headings above it (「経費精算 › 申請期限」), so a search hit can be shown with where it is.
 */

/** Most characters of one passage. */
export const PASSAGE_MAX_CHARS = 500;

export interface Passage {
  heading: string | null;
  text: string;
}

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/;

/** Splits a document's body (front matter already removed) into passages, in order. */
export function splitPassages(body: string, markdown: boolean, max = PASSAGE_MAX_CHARS): Passage[] {
  const out: Passage[] = [];
  const stack: string[] = [];
  let paragraphs: string[] = [];
  let current: string[] = [];
  const heading = (): string | null => (stack.length > 0 ? stack.filter(Boolean).join(' › ') : null);
  const endParagraph = (): void => {
    const p = current.join('\n').trim();
    if (p) paragraphs.push(p);
    current = [];
  };
  const flush = (): void => {
    endParagraph();
    for (const text of pack(paragraphs, max)) out.push({ heading: heading(), text });
    paragraphs = [];
  };
  let fence = false;
  for (const line of body.replace(/\r\n?/g, '\n').split('\n')) {
    if (markdown && /^\s*(```|~~~)/.test(line)) fence = !fence;
    const m = markdown && !fence ? HEADING.exec(line) : null;
    if (m) {
      flush();
      const depth = m[1]!.length;
      stack.length = Math.min(stack.length, depth - 1);
      while (stack.length < depth - 1) stack.push('');
      stack.push(m[2]!);
    } else if (line.trim() === '' && !fence) endParagraph();
    else current.push(line);
  }
  flush();
  return out;
}

/** Joins paragraphs into chunks of at most `max` characters; a longer paragraph is cut at sentence ends. */
function pack(paragraphs: string[], max: number): string[] {
  const chunks: string[] = [];
  let acc = '';
  for (const p of paragraphs.flatMap((x) => cut(x, max))) {
    if (acc && [...acc].length + 2 + [...p].length > max) {
      chunks.push(acc);
      acc = p;
    } else acc = acc ? `${acc}\n\n${p}` : p;
  }
  if (acc) chunks.push(acc);
  return chunks;
}

function cut(paragraph: string, max: number): string[] {
  if ([...paragraph].length <= max) return [paragraph];
  const sentences = paragraph.match(/[^。！？!?\n]+[。！？!?\n]*/gu) ?? [paragraph];
  const out: string[] = [];
  let acc = '';
  for (const s of sentences) {
    for (const piece of hardCut(s, max)) {
      if (acc && [...acc].length + [...piece].length > max) {
        out.push(acc.trim());
        acc = piece;
      } else acc += piece;
    }
  }
  if (acc.trim()) out.push(acc.trim());
  return out;
}

function hardCut(s: string, max: number): string[] {
  const chars = [...s];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += max) out.push(chars.slice(i, i + max).join(''));
  return out;
}
