import { Hono } from "hono";
import { DASHBOARD_JS } from "./client-script";
import { DASHBOARD_CSS, DASHBOARD_HTML } from "./page";
import { UPLOT_CSS, UPLOT_JS } from "./uplot-asset";

// Everything the page loads comes from this Worker: no CDN, no inline script, works offline.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

function asset(body: string, contentType: string): () => Response {
  return () =>
    new Response(body, {
      headers: {
        "content-type": contentType,
        "cache-control": "public, max-age=300",
        "x-content-type-options": "nosniff",
      },
    });
}

/**
 * The live dashboard: `GET /dashboard` (the page) and its static assets (uPlot, script, styles), all bundled
 * into the Worker. Mount it under `/spillway` before the admin guard: the page carries no data, and its
 * script asks for the token before it reads the guarded `/spillway/overview`.
 *
 * @example
 * ```ts
 * app.route("/spillway", dashboardRoutes());
 * app.use("/spillway/*", bearerAuth((c) => c.env.SPILLWAY_ADMIN_TOKEN));
 * ```
 */
export function dashboardRoutes(): Hono {
  const app = new Hono();
  app.get(
    "/dashboard",
    () =>
      new Response(DASHBOARD_HTML, {
        headers: {
          "content-type": "text/html; charset=utf-8",
          "content-security-policy": CSP,
          "cache-control": "no-cache",
          "referrer-policy": "no-referrer",
          "x-content-type-options": "nosniff",
        },
      }),
  );
  app.get("/dashboard/uplot.js", asset(UPLOT_JS, "text/javascript; charset=utf-8"));
  app.get("/dashboard/uplot.css", asset(UPLOT_CSS, "text/css; charset=utf-8"));
  app.get("/dashboard/app.js", asset(DASHBOARD_JS, "text/javascript; charset=utf-8"));
  app.get("/dashboard/app.css", asset(DASHBOARD_CSS, "text/css; charset=utf-8"));
  return app;
}
