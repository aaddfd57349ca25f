import type { TestProject } from "vitest/node";
import { startFakeEngine } from "./fake-engine";

/** Starts the fake engine (many virtual replicas) on 127.0.0.1 for the workerd tests; stops it after. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const fake = await startFakeEngine();
  project.provide("fakeEngineUrl", fake.url);
  return () => fake.close();
}
