// `npm run mutate`: StrykerJS over stryker.config.mjs, started through its Stryker class. Stryker 10's
// package entry also loads its CLI, which refuses Node < 22 on import; the class itself runs on this
// project's Node 20, so it is loaded from its own module file.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const core = dirname(createRequire(import.meta.url).resolve('@stryker-mutator/core/package.json'));
const { Stryker } = await import(pathToFileURL(join(core, 'dist/src/stryker.js')).href);
// Optional file arguments mutate only those files (e.g. the ones a change touched).
const files = process.argv.slice(2);
const results = await new Stryker({ configFile: 'stryker.config.mjs', ...(files.length > 0 ? { mutate: files } : {}) }).runMutationTest();
const counted = results.filter((m) => m.status !== 'Ignored' && m.status !== 'CompileError');
const detected = counted.filter((m) => m.status === 'Killed' || m.status === 'Timeout').length;
console.log(`mutants: ${results.length}, detected: ${detected} of ${counted.length}`);
