-- wrk script for scripts/load-bench.sh: scrape /metrics with the headers Prometheus sends, and
-- print one parseable summary line (latencies in ms) after wrk's own report.
wrk.method = "GET"
wrk.headers["Accept"] = "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.5,"
    .. "application/openmetrics-text;version=0.0.1;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
wrk.headers["Accept-Encoding"] = "gzip"
wrk.headers["User-Agent"] = "Prometheus/3.5.0"

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "wrk-summary: requests=%d secs=%.1f req_per_s=%.1f mb_per_s=%.1f p50_ms=%.2f p90_ms=%.2f "
      .. "p99_ms=%.2f max_ms=%.2f errors_connect=%d errors_read=%d errors_write=%d "
      .. "errors_status=%d errors_timeout=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    summary.bytes / 1e6 / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000,
    e.connect, e.read, e.write, e.status, e.timeout))
end
