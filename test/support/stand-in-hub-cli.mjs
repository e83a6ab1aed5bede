// Run the stand-in Hub on its own (for fixtures/hub/make.py): prints its URL, logs requests on SIGTERM.
import { startHub } from './stand-in-hub.mjs';
import { standInRepos } from './hub-repos.mjs';

const hub = await startHub(standInRepos(), { pageSize: 3 });
process.stdout.write(`${hub.url}\n`);
const stop = async () => {
  process.stderr.write(hub.log().join('\n') + '\n');
  await hub.close();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
