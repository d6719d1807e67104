// ESLint (flat config): typescript-eslint's recommended rules, no import cycles, core/ and observability/ as leaves,
// and the Anthropic SDK only in its adapter, src/brain/anthropic-client.ts (the rest speaks the LlmClient port).
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
      // Prettier wraps code at 120 columns; this catches what it cannot wrap (long strings, comments, titles).
      'max-len': ['error', { code: 120, ignoreUrls: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' },
      ],
    },
  },
  {
    // The shared vocabulary (core/) and logs, metrics and redaction (observability/) are leaves: they import no other
    // folder of src/, so every stage may use them and a feature goes to the stage that owns it (CONTRIBUTING.md).
    files: ['src/**/*.ts'],
    rules: {
      'import/no-restricted-paths': [
        'error',
        {
          zones: ['core', 'observability'].map((leaf) => ({
            target: `./src/${leaf}`,
            from: './src',
            except: [`./${leaf}`],
            message: `src/${leaf}/ is a leaf: it imports no other folder of src/ (CONTRIBUTING.md, boundaries).`,
          })),
        },
      ],
    },
  },
  {
    // Tests and scripts load modules afresh with require().
    files: ['tests/**/*.ts', 'scripts/**/*.js'],
    rules: { '@typescript-eslint/no-require-imports': 'off', '@typescript-eslint/no-this-alias': 'off' },
  },
  {
    // Everything but the Anthropic adapter, tests, fakes and scripts included: fakes answer in plain JSON shapes.
    files: ['**/*.{ts,js,mjs}'],
    ignores: ['src/brain/anthropic-client.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: '@anthropic-ai/sdk',
              message: 'Only src/brain/anthropic-client.ts speaks the Anthropic protocol; use the LlmClient port.',
            },
          ],
        },
      ],
    },
  },
);
