import type { Metric, Registry } from 'prom-client';

/**
 * `airlock_http_request_duration_seconds`, as plain numbers exported in prom-client's histogram
 * form (the registry writes the text): prom-client's Histogram#observe costs 0.18 µs and
 * allocates a closure and a label object per call (measured alone), the bucket search here 0.01 µs.
 */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];
const LATENCY = 'airlock_http_request_duration_seconds';
const LATENCY_HELP = 'Time from the request to the end of its response (the whole body handed to the socket)';

export function latencyHistogram(registry: Registry): { observe(seconds: number): void } {
  const counts = new Float64Array(BUCKETS.length + 1);
  let sum = 0;
  const exported = () => {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    let acc = 0;
    BUCKETS.forEach((le, i) => values.push({ labels: { le }, value: (acc += counts[i]!), metricName: `${LATENCY}_bucket` }));
    const count = acc + counts[BUCKETS.length]!;
    values.push(
      { labels: { le: '+Inf' }, value: count, metricName: `${LATENCY}_bucket` },
      { labels: {}, value: sum, metricName: `${LATENCY}_sum` },
      { labels: {}, value: count, metricName: `${LATENCY}_count` },
    );
    return { name: LATENCY, help: LATENCY_HELP, type: 'histogram' as const, values, aggregator: 'sum' as const };
  };
  registry.registerMetric({
    name: LATENCY,
    help: LATENCY_HELP,
    type: 'histogram',
    aggregator: 'sum',
    get: async () => exported(),
    reset() {
      counts.fill(0);
      sum = 0;
    },
  } as unknown as Metric);
  return {
    observe(seconds) {
      let b = 0;
      while (b < BUCKETS.length && seconds > BUCKETS[b]!) b++;
      counts[b] = counts[b]! + 1;
      sum += seconds;
    },
  };
}
