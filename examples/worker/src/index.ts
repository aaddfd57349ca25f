import { Hono } from "hono";
import { type SpillwayBindings, spillway, spillwayModels } from "spillway";

export { DeploymentRouter } from "spillway";

type Env = SpillwayBindings & { VLLM_API_KEY: string };

const app = new Hono<{ Bindings: Env }>();
app.get("/health", (c) => c.text("ok"));
app.route("/", spillwayModels());
app.post("/v1/chat/completions", spillway());
app.post("/v1/completions", spillway());

export default app;
