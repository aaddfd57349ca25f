/**
 * A supervisor with one guarded child: it starts a child that would run forever (as an engine server does) through
 * src/bench/stack's `startManaged` with its defaults, prints one line of JSON naming itself and the child's process
 * group, and runs until it is killed. One process (run it with `node --import tsx`), so the pid it prints is the one
 * the child's guard watches.
 *
 * Usage: `node --import tsx test/support/guarded-sleeper.ts`; prints e.g. `{"supervisor":4240,"group":4242}`.
 */
import { startManaged } from "../../src/bench/stack";

const sleeper = startManaged("sleeper", process.execPath, ["-e", "setInterval(() => {}, 60_000)"], { quiet: true });
console.log(JSON.stringify({ supervisor: process.pid, group: sleeper.child.pid }));
setInterval(() => {}, 60_000);
