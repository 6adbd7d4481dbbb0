// Runs the scripts of this folder for the Go tests (tests/hdctest's
// Node), one process for every call of a test process: a request a line
// on standard input, {"id":1,"script":"jwe.mjs","args":[…],"stdin":"<base64>"},
// an answer a line on standard output, {"id":1,"code":0,"stdout":"<base64>",
// "stderr":"…"}, as each finishes (calls run side by side). It ends when
// its standard input does, as when the test process exits.
import readline from 'node:readline';

const scripts = new Set(['auditevent.mjs', 'fhir.mjs', 'jwe.mjs', 'nodejose.mjs', 'webhook.mjs']);

async function answer({ id, script, args, stdin }) {
  let res;
  try {
    if (!scripts.has(script)) throw new Error(`no script ${script} in worker.mjs`);
    const { run } = await import(`./${script}`);
    res = await run(args, Buffer.from(stdin ?? '', 'base64'));
  } catch (err) {
    res = { code: 1, stderr: `${script}: ${err.stack ?? err}\n` };
  }
  const stdout = Buffer.from(res.stdout ?? '').toString('base64');
  process.stdout.write(JSON.stringify({ id, code: res.code ?? 0, stdout, stderr: res.stderr ?? '' }) + '\n');
}

for await (const line of readline.createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  if (line.trim() !== '') answer(JSON.parse(line));
}
