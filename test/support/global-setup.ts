// Runs once in vitest's main process, before it starts the test workers, which inherit its
// environment (and pass it on to every CLI a test starts).
//
// NODE_EXTRA_CA_CERTS makes every Node process parse that CA bundle when it starts: about 50 ms of CPU
// on a machine that points it at the system bundle, paid twice by each of the suite's ~900 CLI runs
// (the supervisor and the CLI). No test makes a TLS connection (the stand-in Hub is plain HTTP on
// 127.0.0.1), so the suite drops it. The CLI itself keeps whatever the user's environment says: its
// Hub downloads may need the bundle behind a proxy.
export default function setup(): void {
  delete process.env.NODE_EXTRA_CA_CERTS;
}
