/** Jest: TypeScript through ts-jest in transpile-only mode (type checking is `npm run typecheck`). */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/tests'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json', diagnostics: false }] },
  setupFiles: ['<rootDir>/tests/setup/env.ts'],
  setupFilesAfterEnv: ['<rootDir>/tests/setup/no-network.ts'],
  globalSetup: '<rootDir>/tests/setup/global-setup.ts',
  globalTeardown: '<rootDir>/tests/setup/global-teardown.ts',
  testTimeout: 30000,
  // Three workers on the 2-core CI machine: the two multi-process suites spend 100–170 s waiting for real minute
  // boundaries (schedules firing every minute) with the CPU idle; a third worker runs the rest meanwhile.
  maxWorkers: 3,
};
