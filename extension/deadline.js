// Deadlines of a call (ctx: {deadline, signal}): what is left of it, a
// promise raced against it, the call's cancellation. Pure.

import { fail } from './errors.js';

// POLL_MS is how often a condition the page holds is checked again.
export const POLL_MS = 100;

// budget is how long (ms) an operation may still take: what is left of the
// call less a margin, so a precise error beats the server's own timeout.
export function budget(ctx) {
  const left = ctx.deadline - Date.now();
  const margin = Math.min(Math.max(left / 5, Math.min(left / 2, 500)), 1000);
  return Math.max(Math.floor(left - margin), 1);
}

function timeoutError(what, start) {
  return fail('TIMEOUT', `${what} did not finish within ${Date.now() - start} ms`, 'retry with a larger timeout_ms, or wait_for the condition first');
}

// bounded races p against the call's deadline.
export function bounded(ctx, what, p, start = Date.now()) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(timeoutError(what, start)), Math.max(ctx.deadline - Date.now() - 150, 1));
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// aborted throws once the server cancelled the call.
export function aborted(ctx) {
  if (ctx.signal && ctx.signal.aborted) throw fail('TIMEOUT', 'the server cancelled the call');
}
