import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '**/.turbo/**', 'bench/out/**', 'eslint.config.js', '**/vitest.config.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        // One type-checked program for the whole workspace (and one for the
        // bench, whose Crawlee pulls in DOM types): per-package programs each
        // re-checked every dependency's sources, which took minutes of CI.
        project: ['./tsconfig.check.json', './bench/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'max-params': ['error', 3],
      'no-restricted-syntax': [
        'error',
        { selector: "ThrowStatement > Literal", message: 'Throw Error objects, not strings.' },
      ],
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['@crawlq/*/src/*', '../../packages/*'], message: 'Import a package by its name, not its internals.' }] },
      ],
    },
  },
  {
    files: ['**/test/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      'max-params': 'off',
    },
  },
);
