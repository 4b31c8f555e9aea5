/**
 * Compiles the CLI entry point and the named command modules (with what they import) into a
 * temporary folder inside node_modules/.cache, so `smsgate` can be spawned as a real process
 * without building other engineers' work in progress. Inside the package tree, the profile
 * loader finds hardware/ from the compiled module's location as it does in dist/.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export interface CompiledCli {
  /** Runs `smsgate ...args`; never rejects for a non-zero exit. */
  run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }>;
  remove(): Promise<void>;
}

export async function compileCli(root: string, commandModules: readonly string[]): Promise<CompiledCli> {
  const cacheDir = join(root, 'node_modules', '.cache');
  await mkdir(cacheDir, { recursive: true });
  const outDir = await mkdtemp(join(cacheDir, 'smsgate-cli-'));
  const tsc = join(root, 'node_modules/typescript/bin/tsc');
  await execFileAsync(process.execPath, [
    tsc, '--outDir', outDir, '--rootDir', join(root, 'src'), '--module', 'NodeNext', '--moduleResolution', 'NodeNext',
    '--target', 'ES2022', '--strict', '--skipLibCheck', '--types', 'node', '--resolveJsonModule',
    join(root, 'src/cli/main.ts'), ...commandModules.map((m) => resolve(root, m)),
  ], { cwd: root });
  await writeFile(join(outDir, 'package.json'), '{"type":"module"}');
  return {
    async run(...args: string[]) {
      try {
        // Run from another directory: nothing (hardware/ profiles included) may depend on the cwd.
        const { stdout, stderr } = await execFileAsync(process.execPath, [join(outDir, 'cli/main.js'), ...args], { timeout: 30_000, cwd: tmpdir() });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const failed = err as { code: number; stdout: string; stderr: string };
        return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
      }
    },
    remove: () => rm(outDir, { recursive: true, force: true }),
  };
}
