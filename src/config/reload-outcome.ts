/**
 * What a config reload did (docs/behaviour/reload.md), as `smsgate serve` logs it, the admin
 * listener's POST /reload answers it and `smsgate config reload` prints it.
 */

export interface TransportDiff {
  /** Same entry (deep equality, key order ignored): the running transport keeps its binds and sessions. */
  unchanged: string[];
  /** Same name, other settings: drained and started again with the new entry. */
  changed: string[];
  /** New names: started. */
  added: string[];
  /** Names no longer configured: drained and stopped. */
  removed: string[];
}

export type ReloadOutcome =
  | {
      reloaded: true;
      file: string | null;
      /** The running config's hash after the reload (config-hash.ts). */
      configHash: string;
      transports: TransportDiff;
      /** Top-level keys that differ in the file but keep their running value until a restart. */
      restartNeeded: string[];
    }
  | {
      reloaded: false;
      file: string | null;
      /** The running config's hash, unchanged. */
      configHash: string;
      /** The coded error (CONFIG_INVALID), its message naming the file and the key as `config check` does. */
      error: { code: string; message: string; key: string | null };
    };
