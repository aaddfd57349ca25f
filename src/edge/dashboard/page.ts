/**
 * The dashboard's HTML shell and stylesheet. The page itself holds no data: it is safe to serve to anyone,
 * and shows the charts only once the admin token is given (see `client-script.ts`).
 */
export const DASHBOARD_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>spillway dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/spillway/dashboard/uplot.css">
<link rel="stylesheet" href="/spillway/dashboard/app.css">
</head>
<body>
<header>
  <div class="brand"><span class="logo">&#9776;</span> spillway <span class="sub">live load shedding</span></div>
  <form id="auth" autocomplete="off">
    <input id="token" type="password" placeholder="admin token" aria-label="admin token">
    <button type="submit">Connect</button>
  </form>
  <span id="status" class="status"></span>
</header>
<main id="deployments">
  <p id="hint" class="hint">Enter the admin token (<code>SPILLWAY_ADMIN_TOKEN</code>) to watch the routers and replicas.
  The page sends it as a bearer header to <code>/spillway/overview</code> and keeps it for this tab only.</p>
</main>
<script src="/spillway/dashboard/uplot.js"></script>
<script src="/spillway/dashboard/app.js"></script>
</body>
</html>
`;

/** The dashboard's own styles (uPlot's come from its package). */
export const DASHBOARD_CSS = `
:root { color-scheme: dark; }
* { box-sizing: border-box; }
body { margin: 0; background: #0f131a; color: #e6e9ef; font: 14px/1.4 system-ui, -apple-system, "Segoe UI", sans-serif; }
header { display: flex; align-items: center; gap: 16px; padding: 12px 24px; background: #161b24; border-bottom: 1px solid #232a36; }
.brand { font-size: 18px; font-weight: 600; letter-spacing: 0.3px; }
.logo { color: #4cc9f0; }
.sub { color: #8b95a7; font-weight: 400; font-size: 13px; margin-left: 6px; }
form { display: flex; gap: 8px; margin-left: auto; }
input { background: #0f131a; color: #e6e9ef; border: 1px solid #2c3443; border-radius: 6px; padding: 6px 10px; width: 200px; }
button { background: #4cc9f0; color: #0f131a; border: 0; border-radius: 6px; padding: 6px 14px; font-weight: 600; cursor: pointer; }
.status { font-size: 13px; color: #8b95a7; min-width: 150px; }
.status.ok::before { content: "\\25CF  "; color: #06d6a0; }
.status.bad { color: #f72585; }
main { padding: 8px 24px 24px; }
.hint { color: #8b95a7; max-width: 720px; margin-top: 32px; }
code { background: #1c2230; padding: 1px 5px; border-radius: 4px; }
.deployment-head { display: flex; align-items: baseline; gap: 12px; margin-top: 12px; }
h2 { margin: 8px 0; font-size: 20px; }
h3 { margin: 18px 0 6px; font-size: 13px; text-transform: uppercase; letter-spacing: 1px; color: #8b95a7; font-weight: 600; }
.meta { color: #8b95a7; font-size: 13px; }
.tiles { display: grid; grid-template-columns: repeat(7, minmax(110px, 1fr)); gap: 10px; }
.tile { background: #161b24; border: 1px solid #232a36; border-radius: 8px; padding: 8px 12px; }
.tile-label { color: #8b95a7; font-size: 12px; }
.tile-value { font-size: 22px; font-weight: 600; font-variant-numeric: tabular-nums; }
.tile.alert { border-color: #f72585; }
.tile.alert .tile-value { color: #f72585; }
.grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(420px, 1fr)); gap: 10px; }
.chart { background: #161b24; border: 1px solid #232a36; border-radius: 8px; padding: 6px 4px 2px; min-width: 0; }
.uplot .u-title { font-size: 13px; font-weight: 600; color: #c9d1dc; }
.uplot .u-legend { font-size: 12px; color: #c9d1dc; }
table.replicas { margin-top: 10px; border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
table.replicas th, table.replicas td { text-align: left; padding: 5px 10px; border-bottom: 1px solid #232a36; }
table.replicas th { color: #8b95a7; font-weight: 500; font-size: 12px; }
td.up { color: #06d6a0; }
td.down { color: #f72585; }
`;
