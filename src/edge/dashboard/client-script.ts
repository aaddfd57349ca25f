import { usagePercent } from "./token-usage";

/**
 * The dashboard's browser script, served as `/spillway/dashboard/app.js`. It shows nothing until an admin
 * token is given (typed in the page, or passed once as `#token=...` in the URL, which never reaches a server),
 * then polls `GET /spillway/overview` every second with the token as a bearer header and draws uPlot charts.
 * Counters become per-second rates from the difference of two polls.
 *
 * Plain ES2020 in a string: it runs in the browser, not in the Worker, and no build step is needed.
 * For tests it exposes `document.body.dataset.polls` and each chart's `data-points`.
 */
export const DASHBOARD_JS = `"use strict";
(function () {
  var WINDOW_POINTS = 180;
  var POLL_MS = 1000;
  var COLORS = ["#4cc9f0", "#f72585", "#b5e48c", "#ffb703", "#9d4edd", "#06d6a0"];
  var token = "";
  var timer = null;
  var views = {};
  var polls = 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function setStatus(text, kind) {
    var s = document.getElementById("status");
    s.textContent = text;
    s.className = "status " + kind;
  }
  // One unit (percent) and one rounding (one decimal) for the KV token usage chart and table.
  // (assigned, not declared: a bundler may rename the function, never this variable)
  var usagePercent = ${usagePercent.toString()};
  function fmt(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return "-";
    return Number(v).toFixed(digits === undefined ? 1 : digits);
  }
  function shortName(url) {
    try {
      var u = new URL(url);
      return u.host + (u.pathname === "/" ? "" : u.pathname);
    } catch (e) {
      return url;
    }
  }

  function clock(u, splits) {
    return splits.map(function (s) {
      return new Date(s * 1000).toLocaleTimeString([], { hour12: false });
    });
  }

  function chartOptions(title, width, series, yLabel, points) {
    var axis = { stroke: "#8b95a7", grid: { stroke: "#232a36", width: 1 }, ticks: { stroke: "#232a36" } };
    var xAxis = Object.assign({ values: clock }, axis);
    return {
      title: title,
      width: width,
      height: 200,
      legend: { live: false },
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: function (u, min, max) { return [0, Math.max(1, max * 1.15)]; } } },
      axes: [xAxis, Object.assign({ label: yLabel, size: 50 }, axis)],
      series: [{}].concat(
        series.map(function (s, i) {
          var color = s.color || COLORS[i % COLORS.length];
          var out = { label: s.label, stroke: color, width: 2, points: { show: false } };
          if (s.fill) out.fill = color + "22";
          if (points) {
            out.paths = function () { return null; };
            out.points = { show: true, size: 7, stroke: color, fill: color + "88" };
          }
          return out;
        }),
      ),
    };
  }

  function makeChart(parent, key, title, series, yLabel, points) {
    var box = el("div", "chart");
    box.dataset.chart = key;
    box.dataset.points = "0";
    parent.appendChild(box);
    var width = Math.max(300, box.clientWidth - 8);
    var data = [[]].concat(series.map(function () { return []; }));
    var plot = new uPlot(chartOptions(title, width, series, yLabel, points), data, box);
    return { box: box, plot: plot, data: data, series: series };
  }

  // The suggested delays' histogram: one bar per bucket (x = bucket index, labelled by its bound).
  function makeBars(parent, key, title) {
    var box = el("div", "chart");
    box.dataset.chart = key;
    box.dataset.points = "0";
    parent.appendChild(box);
    var labels = [];
    var axis = { stroke: "#8b95a7", grid: { stroke: "#232a36", width: 1 }, ticks: { stroke: "#232a36" } };
    var opts = {
      title: title,
      width: Math.max(300, box.clientWidth - 8),
      height: 200,
      legend: { live: false },
      cursor: { show: false },
      scales: {
        x: { time: false, range: function (u) { return [-0.5, Math.max(1, u.data[0].length) - 0.5]; } },
        y: { range: function (u, min, max) { return [0, Math.max(1, max * 1.15)]; } },
      },
      axes: [
        Object.assign({ splits: function (u) { return u.data[0]; }, values: function () { return labels; }, grid: { show: false } }, axis),
        Object.assign({ label: "rejections", size: 50 }, axis),
      ],
      series: [{}, { label: "Retry-After given (count)", stroke: "#4cc9f0", fill: "#4cc9f066", width: 1,
        paths: uPlot.paths.bars({ size: [0.7, 60] }), points: { show: false } }],
    };
    var plot = new uPlot(opts, [[], []], box);
    return {
      box: box,
      plot: plot,
      set: function (buckets) {
        labels = buckets.map(function (b) { return b.le === "+Inf" ? ">60s" : "\u2264" + b.le + "s"; });
        plot.setData([buckets.map(function (b, i) { return i; }), buckets.map(function (b) { return b.count; })]);
        box.dataset.points = String(buckets.length);
      },
    };
  }

  function push(chart, x, values) {
    chart.data[0].push(x);
    for (var i = 0; i < values.length; i++) chart.data[i + 1].push(values[i]);
    if (chart.data[0].length > WINDOW_POINTS) chart.data.forEach(function (a) { a.shift(); });
    chart.plot.setData(chart.data);
    chart.box.dataset.points = String(chart.data[0].length);
  }

  function tile(parent, label) {
    var t = el("div", "tile");
    t.appendChild(el("div", "tile-label", label));
    var v = el("div", "tile-value", "-");
    t.appendChild(v);
    parent.appendChild(t);
    return { tile: t, value: v };
  }

  function createView(d) {
    var root = document.getElementById("deployments");
    var section = el("section", "deployment");
    section.dataset.deployment = d.deployment;
    var head = el("div", "deployment-head");
    head.appendChild(el("h2", "", d.deployment));
    head.appendChild(el("span", "meta", d.shards + " router shard" + (d.shards === 1 ? "" : "s") + ", " + d.replicas.length + " replicas"));
    section.appendChild(head);
    var tiles = el("div", "tiles");
    section.appendChild(tiles);
    var view = {
      tiles: {
        queue: tile(tiles, "queued"),
        drain: tile(tiles, "drain rate /s"),
        admitted: tile(tiles, "admitted /s"),
        rejected: tile(tiles, "shed /s"),
        retry: tile(tiles, "last Retry-After"),
        hinted: tile(tiles, "X: hinted retries admitted"),
        promises: tile(tiles, "promises kept"),
        leases: tile(tiles, "in flight"),
        estimator: tile(tiles, "estimator"),
      },
      prev: null,
    };
    section.appendChild(el("h3", "", "Router"));
    var grid = el("div", "grid");
    section.appendChild(grid);
    root.appendChild(section);
    view.queue = makeChart(grid, "queue", "Queue depth", [
      { label: "queued", fill: true },
      { label: "in flight", color: "#b5e48c" },
      { label: "max queued", color: "#5c6677" },
    ], "requests");
    view.rates = makeChart(grid, "rates", "Admitted and shed per second", [
      { label: "admitted /s", color: "#06d6a0", fill: true },
      { label: "shed /s", color: "#f72585", fill: true },
    ], "req/s");
    view.drain = makeChart(grid, "drain", "Drain rate (EWMA)", [{ label: "drain /s", color: "#ffb703", fill: true }], "req/s");
    view.rungs = makeChart(grid, "rungs", "Shed per second, by Retry-After rung", [
      { label: "computed", color: "#4cc9f0", fill: true },
      { label: "static fallback", color: "#ffb703", fill: true },
      { label: "none", color: "#8b95a7" },
    ], "req/s");
    view.retry = makeChart(grid, "retry", "Retry-After: suggested vs observed drain", [
      { label: "suggested s", color: "#4cc9f0" },
      { label: "observed s", color: "#f72585" },
    ], "seconds", true);
    view.buckets = makeBars(grid, "delays", "Suggested Retry-After, all rejections");
    section.appendChild(el("h3", "", "Replicas"));
    var rgrid = el("div", "grid");
    section.appendChild(rgrid);
    var rseries = d.replicas.map(function (r) { return { label: shortName(r.replica) }; });
    view.rqueue = makeChart(rgrid, "replica-queue", "Replica queue length (running + waiting)", rseries, "requests");
    view.rusage = makeChart(rgrid, "replica-usage", "Replica KV token usage", rseries, "%");
    view.rretract = makeChart(rgrid, "replica-retractions", "Replica retractions (total)", rseries, "requests");
    view.table = el("table", "replicas");
    section.appendChild(view.table);
    section.appendChild(el("h3", "", "Tenants (the 10 busiest, the rest as other)"));
    view.tenants = el("table", "replicas tenants");
    section.appendChild(view.tenants);
    return view;
  }

  function renderTenants(table, tenants) {
    table.innerHTML = "<tr><th>tenant</th><th>admitted</th><th>shed (capacity)</th></tr>";
    Object.keys(tenants || {}).forEach(function (name) {
      var tr = el("tr");
      [name, fmt(tenants[name].admitted, 0), fmt(tenants[name].shed, 0)].forEach(function (text) {
        tr.appendChild(el("td", "", text));
      });
      table.appendChild(tr);
    });
  }

  function renderTable(table, replicas) {
    var rows = ["<tr><th>replica</th><th>status</th><th>queue</th><th>running</th><th>waiting</th><th>token usage</th><th>retractions</th><th>tokens/s</th></tr>"];
    table.innerHTML = rows[0];
    replicas.forEach(function (r) {
      var tr = el("tr");
      [shortName(r.replica), r.ok ? "up" : "down", fmt(r.queueLength, 0), fmt(r.running, 0), fmt(r.waiting, 0),
        r.tokenUsage === null ? "-" : fmt(usagePercent(r.tokenUsage), 1) + "%", fmt(r.retractions, 0), fmt(r.genThroughput, 0)]
        .forEach(function (text, i) {
          var td = el("td", i === 1 ? (r.ok ? "up" : "down") : "", text);
          tr.appendChild(td);
        });
      table.appendChild(tr);
    });
  }

  function render(overview) {
    var x = overview.atMs / 1000;
    var hint = document.getElementById("hint");
    if (hint) hint.remove();
    overview.deployments.forEach(function (d) {
      var view = views[d.deployment] || (views[d.deployment] = createView(d));
      var prev = view.prev;
      var dt = prev ? (overview.atMs - prev.atMs) / 1000 : 0;
      var admittedRate = prev && dt > 0 ? Math.max(0, d.admitted - prev.admitted) / dt : 0;
      var shedRate = prev && dt > 0 ? Math.max(0, d.rejected - prev.rejected) / dt : 0;
      var rung = function (name) {
        return prev && dt > 0 ? Math.max(0, (d.rejections[name] || 0) - (prev.rejections[name] || 0)) / dt : 0;
      };
      push(view.rungs, x, [rung("computed"), rung("static_fallback"), rung("none")]);
      view.buckets.set(d.suggestedDelayBuckets);
      view.prev = { atMs: overview.atMs, admitted: d.admitted, rejected: d.rejected, rejections: d.rejections };
      var bounded = d.maxQueuedRequests >= 0; // -1: unlimited (no bound line)
      push(view.queue, x, [d.queueDepth, d.activeLeases, bounded ? d.maxQueuedRequests : null]);
      push(view.rates, x, [admittedRate, shedRate]);
      push(view.drain, x, [d.drainRate]);
      var obs = d.recentObservations;
      view.retry.data = [
        obs.map(function (o) { return o.atMs / 1000; }),
        obs.map(function (o) { return o.suggestedS === undefined ? null : o.suggestedS; }),
        obs.map(function (o) { return o.observedS; }),
      ];
      view.retry.plot.setData(view.retry.data, false);
      // Same time window as the other charts, so the points line up with the load that caused them.
      view.retry.plot.setScale("x", { min: view.queue.data[0][0], max: x });
      view.retry.box.dataset.points = String(obs.length);
      push(view.rqueue, x, d.replicas.map(function (r) { return r.queueLength; }));
      push(view.rusage, x, d.replicas.map(function (r) { return usagePercent(r.tokenUsage); }));
      push(view.rretract, x, d.replicas.map(function (r) { return r.retractions; }));
      renderTable(view.table, d.replicas);
      renderTenants(view.tenants, d.tenants);
      var t = view.tiles;
      t.queue.value.textContent = d.queueDepth + " / " + (bounded ? d.maxQueuedRequests : "unlimited");
      t.drain.value.textContent = fmt(d.drainRate, 1);
      t.admitted.value.textContent = fmt(admittedRate, 1);
      t.rejected.value.textContent = fmt(shedRate, 1);
      t.rejected.tile.classList.toggle("alert", shedRate > 0);
      var last = obs.length > 0 ? obs[obs.length - 1] : null;
      t.retry.value.textContent = last && last.suggestedS !== undefined ? fmt(last.suggestedS, 1) + " s" : "-";
      // X, live: of the hinted requests that came back on time, the share admitted (all timings in the title).
      var h = d.hintedRetries;
      var onTime = h.admitted.on_time + h.refused.on_time;
      t.hinted.value.textContent = onTime > 0 ? fmt((h.admitted.on_time / onTime) * 100, 0) + "%" : "-";
      t.hinted.tile.title = "admitted " + JSON.stringify(h.admitted) + ", refused " + JSON.stringify(h.refused);
      // booked_capacity's word: of the promises that came back, the share kept (placed); its trust in the title.
      var l = d.ledger;
      var settled = l ? l.promises.kept + l.promises.broken : 0;
      t.promises.value.textContent = settled > 0 ? fmt((l.promises.kept / settled) * 100, 0) + "%" : "-";
      t.promises.tile.title = l
        ? "made " + l.promises.made + ", kept " + l.promises.kept + ", broken " + l.promises.broken +
          ", no-show " + l.promises.noShow + "; trust " + fmt(l.trust, 2) +
          (l.freshBaseline !== null ? "; fresh arrivals forecast " + fmt(l.freshBaseline, 1) + "/s" : "")
        : "no ledger: the policy is not booked_capacity";
      t.promises.tile.classList.toggle("alert", l !== null && l.trust < 0.5);
      t.leases.value.textContent = String(d.activeLeases);
      t.estimator.value.textContent = d.estimatorWarm ? "warm" : "cold";
    });
    polls += 1;
    document.body.dataset.polls = String(polls);
  }

  async function poll() {
    try {
      var res = await fetch("/spillway/overview", { headers: { authorization: "Bearer " + token }, cache: "no-store" });
      if (res.status === 401) {
        stop();
        sessionStorage.removeItem("spillway-token");
        setStatus("token refused", "bad");
        return;
      }
      if (!res.ok) {
        setStatus("overview answered " + res.status, "bad");
        return;
      }
      var overview = await res.json();
      render(overview);
      setStatus("live, " + new Date(overview.atMs).toLocaleTimeString(), "ok");
    } catch (e) {
      setStatus("cannot reach the Worker", "bad");
    }
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
  }
  function start(t) {
    token = t;
    sessionStorage.setItem("spillway-token", t);
    stop();
    setStatus("connecting...", "");
    void poll();
    timer = setInterval(poll, POLL_MS);
  }

  document.getElementById("auth").addEventListener("submit", function (event) {
    event.preventDefault();
    var value = document.getElementById("token").value.trim();
    if (value) start(value);
  });
  window.addEventListener("resize", function () {
    Object.keys(views).forEach(function (k) {
      var v = views[k];
      [v.queue, v.rates, v.drain, v.rungs, v.retry, v.buckets, v.rqueue, v.rusage, v.rretract].forEach(function (c) {
        c.plot.setSize({ width: Math.max(300, c.box.clientWidth - 8), height: 200 });
      });
    });
  });
  // A malformed escape in the link (#token=%E0%A4%A) makes decodeURIComponent throw: read as no token, with the
  // sign-in form as the way in, rather than an uncaught URIError that ends this script.
  function linkToken(raw) {
    try {
      return decodeURIComponent(raw);
    } catch (e) {
      return null;
    }
  }
  var fromHash = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (fromHash) history.replaceState(null, "", location.pathname);
  var saved = fromHash ? linkToken(fromHash[1]) : sessionStorage.getItem("spillway-token");
  if (saved) start(saved);
  else if (fromHash) setStatus("the link's token is malformed: enter the token", "bad");
})();
`;
