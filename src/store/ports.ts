/**
 * The async store seam. Code outside src/store consumes a store through
 * `Async<SomeStore>`: the same methods as the SQLite class, each returning a promise. SQLite answers
 * at once (better-sqlite3 is synchronous and a call is microseconds); PostgreSQL answers after a
 * network round trip. One method is one atomic unit of work on either backend: a caller never holds
 * a transaction open across an `await` (better-sqlite3 cannot, and on PostgreSQL it would hold
 * locks for as long as the caller's other I/O takes).
 */

// `any[]` here is the standard way to match every function type in a conditional type; it never
// reaches a caller: the mapped result keeps each method's own parameter and return types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyMethod = (...args: any[]) => unknown;

/** The methods of T, each returning a promise of what T's method returns. Fields are left out. */
export type Async<T> = {
  [K in keyof T as T[K] extends AnyMethod ? K : never]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;
};

/**
 * Wraps a synchronous store as its async port. A throw becomes a rejection, so callers see one
 * failure path whatever the backend. Methods are bound once, not per call.
 */
export function asyncPort<T extends object>(store: T): Async<T> {
  const port: Record<string, (...args: unknown[]) => Promise<unknown>> = {};
  let proto: object | null = store;
  while (proto !== null && proto !== Object.prototype) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === 'constructor' || name in port) continue;
      const value: unknown = (store as Record<string, unknown>)[name];
      if (typeof value !== 'function') continue;
      const method = value as (...args: unknown[]) => unknown;
      port[name] = (...args: unknown[]) => {
        try {
          return Promise.resolve(method.apply(store, args));
        } catch (err) {
          return Promise.reject(err);
        }
      };
    }
    proto = Object.getPrototypeOf(proto) as object | null;
  }
  return port as unknown as Async<T>;
}
