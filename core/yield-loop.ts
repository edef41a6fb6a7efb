/**
 * Cooperative yielding for long loops on the event loop (ingest): `await pause()` after each unit
 * of work gives the loop back to timers and I/O (HTTP requests, /ping, MCP sessions) once more
 * than `sliceMs` of synchronous work has run since the last yield, and costs nothing otherwise.
 * A for-await over an async generator that yields values it already holds never leaves the
 * microtask queue, so without this a server stops answering for the whole of such a loop.
 */
export function timeSlicer(sliceMs = 15): () => Promise<void> {
  let since = performance.now();
  return async () => {
    const now = performance.now();
    if (now - since < sliceMs) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    since = performance.now();
  };
}
