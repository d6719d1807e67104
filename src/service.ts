/** The service's entry for tests and tools: the composition root is `src/app/create-hisho.ts`. */
export { SAMPLE_DIRECTORY, startService, type Service, type ServiceOverrides } from './app/create-hisho';
