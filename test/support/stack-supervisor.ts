/**
 * A supervisor like eval/e2e.ts, the soak and the process tests: it starts `wrangler dev` (with its workerd
 * processes) and one other child through src/bench/stack with the defaults they use, prints one line of JSON
 * naming the children's process groups once the Worker answers, and runs until it is killed.
 *
 * Usage: `tsx test/support/stack-supervisor.ts <persist-to dir>`; prints e.g. `{"groups":[4242,4250]}`.
 */
import { startManaged, startWorkerOnFreePort } from "../../src/bench/stack";

const persistTo = process.argv[2];
if (!persistTo) throw new Error("usage: stack-supervisor.ts <persist-to dir>");
// A child that would run forever, as an engine server does.
const sleeper = startManaged("sleeper", process.execPath, ["-e", "setInterval(() => {}, 60_000)"], { quiet: true });
const { worker } = await startWorkerOnFreePort({ persistTo, quiet: true });
console.log(JSON.stringify({ groups: [worker.child.pid, sleeper.child.pid] }));
setInterval(() => {}, 60_000);
