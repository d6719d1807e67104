import { ERROR_CODES } from '../../src/core/app-error';
import { loadPrompts } from '../../src/brain/prompts';
import { MESSAGE_KEYS } from '../../src/core/messages';

describe('persona message keys', () => {
  const expected = [...MESSAGE_KEYS, ...Object.keys(ERROR_CODES).map((c) => `error.${c}`)].sort();

  it.each(['soul', 'polite'] as const)(
    'the %s persona has every typed key in Japanese and English, and no other',
    (p) => {
      const { messages } = loadPrompts(p);
      expect(Object.keys(messages.ja).sort()).toEqual(expected);
      expect(Object.keys(messages.en).sort()).toEqual(expected);
    },
  );
});
