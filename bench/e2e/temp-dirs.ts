/** Temp dirs of the e2e bench's runs, removed when the run ends and, failing that, when the bench exits (Ctrl-C included). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const live = new Set<string>();

export function makeTempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  live.add(dir);
  return dir;
}

export function removeTempDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  live.delete(dir);
}

process.once('exit', () => {
  for (const dir of live) rmSync(dir, { recursive: true, force: true });
});
