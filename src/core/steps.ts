/**
 * Ordered steps, in the shape of Slack Bolt's middleware: a step reads what the steps before it left (`In`) and
 * either ends the list by returning its result (`R`) or calls `next` with what it adds (`Out`). The receive steps
 * (`adapters/receive.ts`), a turn's steps (`turn/turn.ts`) and a notice's steps (`notices/notice-delivery.ts`) are
 * such lists; the compiler checks that each step comes after the steps whose fields it reads. `D`: what every step
 * of the list is given (its dependencies).
 */
export type Step<D, In, Out, R> = (s: In, d: D, next: (s: Out) => Promise<R>) => Promise<R>;

/**
 * Watches each step of a run (a span per step, `observability/tracing.ts`): `run` starts the step; the step's call
 * of `next` goes through `leave`, so what follows the step runs outside whatever the watch opened for it.
 */
export type StepWatch = <R>(
  name: string,
  run: (leave: <T>(next: () => Promise<T>) => Promise<T>) => Promise<R>,
) => Promise<R>;

/** A list of steps from `In` to `Out`, ending in `R`: `Steps.of<D, In, R>().then(a).then(b)…`. */
export class Steps<D, In, Out, R> {
  private constructor(private readonly list: readonly Step<D, unknown, unknown, R>[]) {}

  /** An empty list. */
  static of<D, In, R>(): Steps<D, In, In, R> {
    return new Steps<D, In, In, R>([]);
  }

  /** The list with `step` added at its end. */
  then<Next>(step: Step<D, Out, Next, R>): Steps<D, In, Next, R> {
    return new Steps<D, In, Next, R>([...this.list, step as Step<D, unknown, unknown, R>]);
  }

  /**
   * Runs the steps over `s`; a step that does not call `next` ends the list with its result; after the last, `end`.
   * `watch`, when given, sees each step start and hand over to the next (tracing).
   */
  run(s: In, d: D, end: (s: Out) => Promise<R>, watch?: StepWatch): Promise<R> {
    const at = (i: number, state: unknown): Promise<R> => {
      const step = this.list[i];
      if (!step) return end(state as Out);
      let called = false;
      const next = (n: unknown): Promise<R> => {
        if (called) throw new Error(`step ${step.name}: next() called twice`);
        called = true;
        return at(i + 1, n);
      };
      if (!watch) return step(state, d, next);
      return watch(step.name, (leave) => step(state, d, (n) => leave(() => next(n))));
    };
    return at(0, s);
  }
}
