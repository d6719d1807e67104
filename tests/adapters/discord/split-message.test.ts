import { splitDiscordMessage } from '../../../src/adapters/discord/split-message';

/** Every chunk has an even number of ``` (renders as balanced markdown). */
function balanced(chunk: string): boolean {
  return (chunk.match(/```/g) ?? []).length % 2 === 0;
}

describe('splitDiscordMessage', () => {
  it('returns short text unchanged and blank text as no chunks', () => {
    expect(splitDiscordMessage('こんにちは')).toEqual(['こんにちは']);
    expect(splitDiscordMessage('')).toEqual([]);
    expect(splitDiscordMessage(' \n\n \t')).toEqual([]);
  });

  it('keeps exactly 2000 characters in one message and splits 2001', () => {
    const exact = 'a'.repeat(2000);
    expect(splitDiscordMessage(exact)).toEqual([exact]);

    const twoLines = `${'a'.repeat(1000)}\n${'b'.repeat(999)}`; // 2000 with the newline
    expect(splitDiscordMessage(twoLines)).toEqual([twoLines]);

    const over = `${'a'.repeat(1000)}\n${'b'.repeat(1000)}`; // 2001
    expect(splitDiscordMessage(over)).toEqual(['a'.repeat(1000), 'b'.repeat(1000)]);
  });

  it('splits on line boundaries, packing lines greedily', () => {
    // 100 chars each
    const lines = Array.from({ length: 30 }, (_, i) => `${String(i).padStart(2, '0')}:${'x'.repeat(97)}`);
    const chunks = splitDiscordMessage(lines.join('\n'));
    // 19 lines + 18 newlines = 1918; a 20th line would make 2019.
    expect(chunks).toHaveLength(2);
    expect(chunks[0]).toBe(lines.slice(0, 19).join('\n'));
    expect(chunks[1]).toBe(lines.slice(19).join('\n'));
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(2000);
    expect(chunks.join('\n')).toBe(lines.join('\n'));
  });

  it('fills a chunk to exactly the limit when lines allow it', () => {
    const first = 'a'.repeat(1500);
    const second = 'b'.repeat(499); // 1500 + 1 + 499 = 2000
    const third = 'c'.repeat(10);
    expect(splitDiscordMessage([first, second, third].join('\n'))).toEqual([`${first}\n${second}`, third]);
  });

  it('hard-splits a line longer than the limit without losing characters', () => {
    const long = 'z'.repeat(4500);
    const chunks = splitDiscordMessage(long);
    expect(chunks.map((c) => c.length)).toEqual([2000, 2000, 500]);
    expect(chunks.join('')).toBe(long);
  });

  it('hard-splits a long line that follows shorter ones', () => {
    const text = `intro\n${'y'.repeat(2500)}\noutro`;
    const chunks = splitDiscordMessage(text);
    expect(chunks[0]).toBe('intro');
    expect(chunks.every((c) => c.length <= 2000 && c.trim() !== '')).toBe(true);
    expect(chunks.join('\n').replace(/\n/g, '')).toBe(text.replace(/\n/g, ''));
  });

  it('does not cut a surrogate pair in half', () => {
    const text = `${'a'.repeat(1999)}😀${'b'.repeat(10)}`;
    const chunks = splitDiscordMessage(text);
    expect(chunks[0]).toBe('a'.repeat(1999));
    expect(chunks[1]).toBe(`😀${'b'.repeat(10)}`);
  });

  it('closes and reopens a code fence (with its language) across chunks', () => {
    const code = Array.from({ length: 60 }, (_, i) => `const v${i} = ${'1'.repeat(50)};`);
    const text = ['説明です。', '```ts', ...code, '```', 'おわり'].join('\n');
    const chunks = splitDiscordMessage(text);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(2000);
      expect(balanced(c)).toBe(true);
    }
    expect(chunks[0]!.endsWith('\n```')).toBe(true);
    expect(chunks[1]!.startsWith('```ts\n')).toBe(true);
    expect(chunks[chunks.length - 1]!.endsWith('おわり')).toBe(true);
    // Every code line survives, in order.
    const rejoined = chunks.join('\n');
    let at = -1;
    for (const line of code) {
      const next = rejoined.indexOf(line, at + 1);
      expect(next).toBeGreaterThan(at);
      at = next;
    }
  });

  it('keeps fences balanced with a small limit and a hard-split line inside a block', () => {
    const text = ['```', 'x'.repeat(120), 'short', '```', 'after'].join('\n');
    const chunks = splitDiscordMessage(text, 40);
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(40);
      expect(balanced(c)).toBe(true);
      expect(c.trim()).not.toBe('');
    }
    expect(chunks.join('').replace(/```|\n/g, '')).toBe(text.replace(/```|\n/g, ''));
  });

  it('closes an unbalanced fence in the last chunk of split text', () => {
    const text = ['```', ...Array.from({ length: 10 }, () => 'q'.repeat(30))].join('\n');
    const chunks = splitDiscordMessage(text, 100);
    expect(chunks.length).toBeGreaterThan(1);
    for (const c of chunks) expect(balanced(c)).toBe(true);
  });

  it('never returns empty chunks when blank lines fall on a boundary', () => {
    const text = `${'a'.repeat(2000)}\n\n\n\n${'b'.repeat(5)}`;
    expect(splitDiscordMessage(text)).toEqual(['a'.repeat(2000), 'b'.repeat(5)]);
  });

  it('holds its invariants on generated texts (length, balance, no blanks, nothing lost)', () => {
    let seed = 42;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    const pieces = ['```', '```js', 'x', 'hello world', '', '😀😀', 'word '.repeat(30), 'q'.repeat(90)];
    for (let round = 0; round < 200; round += 1) {
      const lines = Array.from({ length: 5 + rand(40) }, () => pieces[rand(pieces.length)]!);
      const text = lines.join('\n');
      const limit = 20 + rand(200);
      const chunks = splitDiscordMessage(text, limit);
      for (const c of chunks) {
        expect(c.length).toBeLessThanOrEqual(limit);
        expect(c.trim()).not.toBe('');
        if (text.length > limit) expect(balanced(c)).toBe(true);
      }
      const strip = (t: string): string => t.replace(/```(js)?|\s/g, '');
      expect(strip(chunks.join(''))).toBe(strip(text));
    }
  });

  it('rejects limits too small to hold a fenced chunk', () => {
    expect(() => splitDiscordMessage('abc', 5)).toThrow(RangeError);
  });
});
