/**
 * The async port of the one SQLite store module that is still free functions taking `db`
 * (webhook-store.ts): by the seam's naming rule, the class it becomes has the same methods minus
 * `db`, which is what AsyncQueries derives from the module. The PostgreSQL WebhookStore implements
 * it, so the compiler says if the two drift. Every other store is a class: its port is
 * `Async<ThatClass>` (src/store/ports.ts).
 */
import type { SqliteDatabase } from './sqlite/database.js';
import type * as webhookQueries from './sqlite/webhook-store.js';

// `any[]` matches every parameter list in a conditional type; the mapped result keeps each
// function's own parameter and return types.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type DbFunction = (db: SqliteDatabase, ...args: any[]) => unknown;

type WithoutDb<F> = F extends (db: SqliteDatabase, ...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : never;

/** The functions of a module that take `db` first, as async methods without it. */
export type AsyncQueries<Module> = {
  [K in keyof Module as Module[K] extends DbFunction ? K : never]: WithoutDb<Module[K]>;
};

/** webhook-store.ts's functions as the async methods of a `WebhookStore`. */
export type WebhookStorePort = AsyncQueries<typeof webhookQueries>;
