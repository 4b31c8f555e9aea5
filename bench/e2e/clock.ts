/**
 * The e2e bench's one clock: CLOCK_MONOTONIC in ms. process.hrtime reads it (libuv uv_hrtime), and
 * so does V8's CPU profiler for its sample timestamps (in µs), so event times recorded in the SMSC,
 * the receiver, the bench and the gateway's profile all sit on one timeline.
 */
export function monoMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}
