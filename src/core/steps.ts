/**
 * Ordered steps, in the shape of Slack Bolt's middleware: each step reads the context the steps before it built
 * (`In`), and either ends the list by returning its result or calls `next` with the context it adds to (`Out`).
 * The receive steps (`adapters/receive.ts`), a turn's steps (`turn/turn.ts`) and a notice's steps
 * (`notices/notice-delivery.ts`) are such lists; the compiler checks that each step gets the fields it reads.
 */
export type Step<D, In, Out, R> = (c: In, d: D, next: (c: Out) => Promise<R>) => Promise<R>;

/**
 * Watches each step of a run (a span per step, `observability/tracing.ts`): `run` starts the step; the step's call
 * of `next` goes through `leave`, so what follows the step runs outside whatever the watch opened for it.
 */
export type StepWatch = <R>(
  name: string,
  run: (leave: <T>(next: () => Promise<T>) => Promise<T>) => Promise<R>,
) => Promise<R>;

/**
 * A list of steps from a context `In` to `Out`, each ending in `R`: built with {@link steps} and `then`, run with
 * `run` (the last step's `next` is `end`).
 */
export class Steps<D, In, Out, R> {
  private constructor(private readonly list: readonly Step<D, unknown, unknown, R>[]) {}

  /** An empty list over contexts of type `In`. */
  static of<D, In, R>(): Steps<D, In, In, R> {
    return new Steps<D, In, In, R>([]);
  }

  /** The list with `step` added at its end. */
  then<Next>(step: Step<D, Out, Next, R>): Steps<D, In, Next, R> {
    return new Steps<D, In, Next, R>([...this.list, step as Step<D, unknown, unknown, R>]);
  }

  /** The steps' names, in order. */
  get names(): string[] {
    return this.list.map((s) => s.name);
  }

  /**
   * Runs the steps over `c`; a step that does not call `next` ends the list with its result. `watch`, when given,
   * sees each step start and hand over to the next (tracing).
   */
  run(c: In, d: D, end: (c: Out) => Promise<R>, watch?: StepWatch): Promise<R> {
    const at = (i: number, ctx: unknown): Promise<R> => {
      const step = this.list[i];
      if (!step) return end(ctx as Out);
      let called = false;
      const next = (n: unknown): Promise<R> => {
        if (called) throw new Error(`step ${step.name}: next() called twice`);
        called = true;
        return at(i + 1, n);
      };
      if (!watch) return step(ctx, d, next);
      return watch(step.name, (leave) => step(ctx, d, (n) => leave(() => next(n))));
    };
    return at(0, c);
  }
}
