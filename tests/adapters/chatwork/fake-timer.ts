/** A fake clock whose sleep advances time instantly and records each wait. */
export function fakeTimer(start = Date.UTC(2026, 0, 1)) {
  const state = { t: start, sleeps: [] as number[] };
  return {
    state,
    now: () => state.t,
    sleep: async (ms: number) => {
      state.sleeps.push(ms);
      state.t += ms;
    },
  };
}
