// ESLint (flat config): typescript-eslint's recommended rules, no import cycles, and the Anthropic SDK
// only inside src/brain/ (the rest of the service speaks in proposals and decisions, not in the wire format).
import js from '@eslint/js';
import importPlugin from 'eslint-plugin-import';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'data/**', 'coverage/**', 'node_modules/**', 'src/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,js,mjs}'],
    plugins: { import: importPlugin },
    settings: {
      'import/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import/resolver': { node: { extensions: ['.ts', '.js'] } },
    },
    rules: {
      // The compiler checks names (typescript-eslint's advice); plain .js scripts are small and run in CI.
      'no-undef': 'off',
      'no-irregular-whitespace': ['error', { skipComments: true }],
      'import/no-cycle': ['error', { ignoreExternal: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // Tests and scripts load modules afresh with require() and fake SDK objects.
    files: ['tests/**/*.ts', 'scripts/**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off', '@typescript-eslint/no-this-alias': 'off' },
  },
  {
    files: ['src/**/*.ts', 'handlers/**/*.ts'],
    ignores: ['src/brain/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@anthropic-ai/sdk',
              message: 'Only src/brain/ speaks the Anthropic protocol (tool definitions, continuations).',
            },
          ],
        },
      ],
    },
  },
);
