/**
 * How a step store answers (src/engine/contracts.ts): at once (SQLite) or after a round trip
 * (PostgreSQL). Apart from the contracts so each step file can name it without importing the
 * aggregate of every step.
 */
export type StoreMode = 'sync' | 'async';

/** A step store method's result in the given mode. */
export type StoreResult<M extends StoreMode, T> = M extends 'sync' ? T : Promise<T>;
