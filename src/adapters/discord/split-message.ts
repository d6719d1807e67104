/**
 * Splitting outbound text for Discord's 2,000-character `content` limit (PLATFORMS.md B5). discord.js
 * does not split for us.
 */

/** Discord's maximum `content` length for one message. */
export const DISCORD_MESSAGE_LIMIT = 2000;

/** Smallest limit the splitter accepts (room for a reopened and closed code fence plus content). */
export const MIN_SPLIT_LIMIT = 10;

const FENCE = '```';
const CLOSE = '\n```';

/** Number of ``` runs in a piece of text: an odd count toggles "inside a code block". */
function fenceToggles(piece: string): boolean {
  let count = 0;
  let at = piece.indexOf(FENCE);
  while (at !== -1) {
    count += 1;
    at = piece.indexOf(FENCE, at + FENCE.length);
  }
  return count % 2 === 1;
}

/** The fence line to repeat at the top of a continuation chunk ("```ts" keeps highlighting). */
function openerFor(line: string, limit: number): string {
  const trimmed = line.trim();
  const isPlainOpener = /^```[\w+#.-]*$/.test(trimmed);
  return isPlainOpener && trimmed.length <= Math.floor(limit / 4) ? trimmed : FENCE;
}

/** Cuts at `max`, stepping back one if that would split a UTF-16 surrogate pair. */
function safeCut(line: string, max: number): number {
  if (max > 1 && max < line.length) {
    const code = line.charCodeAt(max - 1);
    if (code >= 0xd800 && code <= 0xdbff) return max - 1;
  }
  return max;
}

/**
 * Splits text into Discord-sized messages.
 *
 * - Text that fits is returned unchanged as one chunk.
 * - Otherwise chunks break on line boundaries (the newline at a break is dropped); a line longer than
 *   the room left is hard-split.
 * - When a break falls inside a ``` code block, the chunk is closed with ``` and the next one reopens
 *   it with the same opener (language tag kept), so every chunk renders as valid markdown.
 * - Blank chunks are never returned; blank text gives `[]`.
 *
 * @param text - The message text.
 * @param limit - Maximum length of each chunk in UTF-16 units (default 2,000; at least 10).
 * @returns The chunks in order, each at most `limit` long.
 * @throws RangeError when `limit` is not an integer ≥ {@link MIN_SPLIT_LIMIT}.
 */
export function splitDiscordMessage(text: string, limit: number = DISCORD_MESSAGE_LIMIT): string[] {
  if (!Number.isInteger(limit) || limit < MIN_SPLIT_LIMIT) {
    throw new RangeError(`splitDiscordMessage: limit must be an integer >= ${MIN_SPLIT_LIMIT}`);
  }
  if (text.trim() === '') return [];
  if (text.length <= limit) return [text];

  const chunks: string[] = [];
  let current: string | null = null; // null: nothing in the chunk yet
  let fresh = true; // the chunk holds nothing but (at most) a reopened fence
  let inFence = false;
  let opener = FENCE;

  const flush = (): void => {
    if (current !== null) {
      const body = inFence ? current + CLOSE : current;
      if (current.trim() !== '' && !(fresh && inFence)) chunks.push(body);
    }
    current = inFence ? opener : null;
    fresh = true;
  };

  const append = (piece: string): void => {
    current = current === null ? piece : `${current}\n${piece}`;
    fresh = false;
    if (fenceToggles(piece)) {
      inFence = !inFence;
      if (inFence) opener = openerFor(piece, limit);
    }
  };

  for (const original of text.split('\n')) {
    let line = original;
    for (;;) {
      const base = current === null ? 0 : (current as string).length + 1;
      const closesAfter = fenceToggles(line) ? !inFence : inFence;
      if (fresh && current === null && line.trim() === '') break; // no leading blank lines
      if (base + line.length + (closesAfter ? CLOSE.length : 0) <= limit) {
        append(line);
        break;
      }
      if (!fresh) {
        flush();
        continue;
      }
      // The line does not fit even in an empty chunk: take what fits, leaving room to close a fence
      // when the chunk would end inside one.
      let room = limit - base;
      const fenceAfter = fenceToggles(line.slice(0, room)) ? !inFence : inFence;
      if (fenceAfter) room -= CLOSE.length;
      const cut = safeCut(line, Math.max(1, room));
      append(line.slice(0, cut));
      line = line.slice(cut);
      flush();
      if (line === '') break;
    }
  }
  flush();
  return chunks;
}
