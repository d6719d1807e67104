/**
 * Text as PostgreSQL can store it. A JSON body may carry `\u0000` and unpaired surrogates (`\ud800`):
 * valid JSON, valid JavaScript strings, but `text` columns reject NUL and `jsonb` rejects both — a
 * validly signed message would fail at intake and be lost (ChatWork never retries). NUL characters are
 * dropped, unpaired surrogates become U+FFFD (as a UTF-8 decoder would show them); nothing else changes.
 */
export function storableText(s: string): string {
  return s
    .replaceAll('\u0000', '')
    .replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}
