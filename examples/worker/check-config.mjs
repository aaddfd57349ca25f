// Checks a SPILLWAY_CONFIG before a deploy with the parser the Worker runs (`spillway/config` loads in Node; the
// package's main entry needs workerd): `node check-config.mjs config.json`, or SPILLWAY_CONFIG in the environment.
// An invalid one exits with status 1 and every problem (on one line, `; ` between them); neither given, status 2.
import { readFileSync } from "node:fs";
import { ConfigError, parseConfig } from "spillway/config";

if (!process.argv[2] && process.env.SPILLWAY_CONFIG === undefined) {
  console.error("usage: node check-config.mjs config.json (or SPILLWAY_CONFIG in the environment)");
  process.exit(2);
}
const text = process.argv[2] ? readFileSync(process.argv[2], "utf8") : process.env.SPILLWAY_CONFIG;
try {
  const names = Object.keys(parseConfig(text).deployments);
  console.log(`SPILLWAY_CONFIG is valid: ${names.length} deployment(s), ${names.join(", ")}`);
} catch (error) {
  if (!(error instanceof ConfigError)) throw error;
  console.error(error.message);
  process.exitCode = 1;
}
