// The first decode worker of a mining run, started by the CLI before it loads the mine command
// (engine/pool.ts startEarlyWorker); here because the CLI imports the engine through its commands.
export { startEarlyWorker } from '../engine/pool.js';
