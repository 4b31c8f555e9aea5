/** Every migration, in order. Listed explicitly (no glob) so a build cannot pick up a stray file. */
import { InitialSchema1763740000000 } from '../../migrations/1763740000000-initial-schema.js';

export const MIGRATIONS = [InitialSchema1763740000000] as const;
