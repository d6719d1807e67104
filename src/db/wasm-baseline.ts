import v8 from 'node:v8';

// Prisma 7's query compiler is WebAssembly. V8 compiles it once with its baseline compiler (Liftoff) and then
// again, in the background, with its optimising one (TurboFan): that second copy of machine code costs about
// 85 MB of resident memory (idle RSS 228 → 143 MB, measured) for no gain visible on the bench, and the service
// must stay within 200 MB (SPEC §5). Keep WebAssembly on the baseline compiler. Set before any module is
// compiled; see docs/decisions/0001-wasm-baseline-compiler.md.
v8.setFlagsFromString('--liftoff-only');
