/**
 * ChatWork message notation (PLATFORMS.md A3): stripping it for the LLM, reading mentions and reply
 * tags from inbound bodies, and neutralising it in text we post.
 */
import { addresseeAfterTag } from '../../core/addressee';

/** Where a `[rp aid=… to=room-message]` reply tag points. */
export interface ChatworkReplyTarget {
  accountId: string;
  roomId: string;
  messageId: string;
}

/**
 * Removes ChatWork markup, leaving plain text for the LLM. Order matters: code blocks are unwrapped
 * before quotes and info boxes. The name text after `[To:]`/`[rp]` is plain text and survives.
 *
 * @param body - A raw ChatWork message body.
 * @returns The body without notation tags, trimmed.
 */
export function stripChatworkMarkup(body: string): string {
  return (
    body
      .replace(/\[rp aid=\d+ to=\d+-[^\]]+\]/gi, '')
      .replace(/\[To:\d+\]/gi, '')
      .replace(/\[toall\]/gi, '')
      .replace(/\[p(?:icon|name|iconname):\d+\]/gi, '')
      .replace(/\[preview id=\d+ ht=\d+\]/gi, '')
      .replace(/\[dtext:[^\]]+\]/gi, '')
      .replace(/\[download:\d+\]([^[]+)/gi, (_m, label: string) => label.trim())
      .replace(/\[url\](https?:\/\/[^[]+?)\[\/url\]/gi, '$1')
      .replace(/\[code\]([\s\S]*?)\[\/code\]/gi, '$1')
      .replace(/\[hr\]/gi, '\n')
      .replace(/\[qt\]\[qtmeta aid=\d+(?: time=\d+)?\]([\s\S]*?)\[\/qt\]/gi, '$1')
      .replace(/\[info\]\[title\]([\s\S]*?)\[\/title\]([\s\S]*?)\[\/info\]/gi, '$1\n$2')
      .replace(/\[info\]([\s\S]*?)\[\/info\]/gi, '$1')
      // Leftovers of unbalanced or nested blocks the pairwise rules above could not match.
      .replace(/\[\/?(?:qt|info|title|code)\]|\[qtmeta[^\]]*\]/gi, '')
      .trim()
  );
}

/** Drops `[qt]` blocks (quotes nest; innermost first until none is left). */
function withoutQuotes(body: string): string {
  let out = body;
  const innermostQuote = /\[qt\](?:(?!\[qt\])[\s\S])*?\[\/qt\]/gi;
  for (let prev = ''; prev !== out;) {
    prev = out;
    out = out.replace(innermostQuote, '');
  }
  return out;
}

/** Drops `[code]` and `[qt]` blocks: tags copied inside them are not real mentions or replies. */
function withoutCodeAndQuotes(body: string): string {
  return withoutQuotes(body.replace(/\[code\][\s\S]*?\[\/code\]/gi, ''));
}

const ADDRESS_TAG = /\[To:\d+\]|\[rp aid=\d+ to=\d+-[^\]]+\]/i;

/**
 * The person's own words, for deterministic parsing (confirmation answers): quotes dropped, and every
 * `[To:]` / `[rp]` tag removed together with the addressee name that follows it on its line, as
 * ChatWork's TO and 返信 buttons write it (`[To:9999]Hishoさん\nはい` → `はい`). Other markup is
 * stripped as for the LLM.
 *
 * @param body - A raw ChatWork message body.
 * @param botNames - Names of the bot (e.g. its display name from `GET /me`), recognised with or
 *   without an honorific; other names are recognised by their honorific.
 */
export function chatworkAnswerText(body: string, botNames: readonly string[] = []): string {
  const addressee = addresseeAfterTag(botNames);
  let rest = withoutQuotes(body);
  let out = '';
  for (let m = ADDRESS_TAG.exec(rest); m; m = ADDRESS_TAG.exec(rest)) {
    out += rest.slice(0, m.index);
    rest = rest.slice(m.index + m[0].length).replace(addressee, '');
  }
  return stripChatworkMarkup(out + rest);
}

/**
 * Account ids mentioned by `[To:n]` or `[rp aid=n …]`, outside code and quote blocks, in order of first
 * appearance and without duplicates. `[toall]` is not a mention of anyone in particular.
 *
 * @param body - A raw ChatWork message body.
 */
export function parseMentions(body: string): string[] {
  const ids = new Set<string>();
  for (const m of withoutCodeAndQuotes(body).matchAll(/\[To:(\d+)\]|\[rp aid=(\d+)(?:\s[^\]]*)?\]/gi)) {
    const id = m[1] ?? m[2];
    if (id) ids.add(id);
  }
  return [...ids];
}

/**
 * The first reply tag of a body (outside code and quote blocks), if any.
 *
 * @param body - A raw ChatWork message body.
 */
export function parseReplyTo(body: string): ChatworkReplyTarget | undefined {
  const m = /\[rp aid=(\d+) to=(\d+)-([^\]\s]+)\]/i.exec(withoutCodeAndQuotes(body));
  if (!m || !m[1] || !m[2] || !m[3]) return undefined;
  return { accountId: m[1], roomId: m[2], messageId: m[3] };
}

/**
 * A `[` that could open a ChatWork tag: `[toall]`, `[To:…]`, `[rp …]`, `[info]`, `[/info]`, `[picon:…]`…
 * Every tag starts with a letter (after an optional `/`); invisible or blank characters in between are
 * tolerated so that look-alike variants are caught too.
 */
const TAG_OPENER = /\[(?=[\s\u200B-\u200D\u2060\uFEFF]*\/?[\s\u200B-\u200D\u2060\uFEFF]*[A-Za-z])/g;

/**
 * Makes LLM- or user-originated text safe to post: no ChatWork tag survives, so the text can never
 * mention everyone or anyone, quote, or break out of an info box. The opening `[` of anything tag-like
 * becomes a full-width `［` (same length, still readable).
 *
 * @param text - Untrusted text.
 * @returns Text ChatWork renders literally.
 */
export function neutralizeForChatwork(text: string): string {
  return text.replace(TAG_OPENER, '［');
}
