// How a script of this folder runs: as a program, `node SCRIPT ARGS <
// input`, or inside worker.mjs, which the Go tests start once per test
// process so that node and the libraries load once instead of once a call
// (half a second of CPU each time, a third of the end-to-end tests' CPU).
// A script exports run(args, input), which returns { stdout, stderr, code },
// and ends with `await program(import.meta.url, run)`.
import { pathToFileURL } from 'node:url';

// program runs run as the program when the script at url is the one node
// was asked to run, and does nothing when another module imports it.
export async function program(url, run) {
  if (!process.argv[1] || url !== pathToFileURL(process.argv[1]).href) return;
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const { stdout = '', stderr = '', code = 0 } = await run(process.argv.slice(2), Buffer.concat(chunks));
  process.stdout.write(stdout);
  process.stderr.write(stderr);
  process.exitCode = code;
}
