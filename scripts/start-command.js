// How `npm start` runs the service, in one place: package.json's "start" script is exactly `startScript`
// (a test keeps them equal), and the benchmark and process tests start the service with the same flags and
// environment. Memory (issue 10, SPEC §5 ≤ 250 MB): a 2 MB young-generation semi-space per thread (V8's default
// 16 MB is sized for throughput-bound batch work; the service's turns allocate little and briefly); WebAssembly
// kept on V8's baseline compiler (Prisma 7's query compiler is a 3.4 MB wasm module that every thread using
// Prisma instantiates; letting V8 recompile its hot functions with TurboFan cost ≈ 45 MB per thread, measured:
// 152 → 107 MB for one client after its first queries, no slower per query; the service's RSS fell by ≈ 80 MB
// in the bench); a fixed old-generation growing factor of 1.5 (V8 otherwise sets it from how fast its collections
// seem: the worker threads run at a lower CPU priority, are preempted during a collection, look slow, and their heap
// was let grow to 126 MB between two full collections; RSS peak under load 189–251 MB in 13 runs, with the flag
// 193–198 MB in 6, CPU per message unchanged); two malloc arenas (glibc's default of 8 per core keeps freed
// memory of every thread mapped); and the garbage collector without helper threads (V8's helpers are shared by
// every thread of the process and run at the main thread's priority, so a worker thread's collections, done there,
// escaped its lower priority and took CPU from the intake; with the flag each thread collects its own heap at its own
// priority: the service's CPU per message against the bench's −4.4 %, throughput +12 %, steady-load ack p99 lower,
// RSS peak ≈ 8 MB higher; eight runs against eight, README "A tenth sitting").
const NODE_FLAGS = ['--max-semi-space-size=2', '--liftoff-only', '--heap-growing-percent=50', '--single-threaded-gc'];
const ENV = { MALLOC_ARENA_MAX: '2' };

module.exports = {
  NODE_FLAGS,
  ENV,
  /** The command line of package.json's "start". */
  startScript: `${Object.entries(ENV)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')} node ${NODE_FLAGS.join(' ')} scripts/start.js`,
};
