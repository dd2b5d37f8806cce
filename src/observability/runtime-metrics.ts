/**
 * The process's own metrics, under the names prom-client's default metrics use (so the usual
 * Node.js dashboards read them): event-loop delay, heap and memory, CPU time, start time. Each
 * is read when Prometheus scrapes; the event-loop delay is sampled by Node's own monitor
 * (perf_hooks, every 10 ms) and reset at each scrape, so its figures cover the last interval.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { Counter, Gauge, type Registry } from "./prom-client-classes.js";

export interface RuntimeMetrics {
  /** Stops the event-loop monitor. */
  stop(): void;
}

export function registerRuntimeMetrics(registry: Registry): RuntimeMetrics {
  const registers = [registry];
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  // The first gauge of each group reads the figures and sets the others: the registry reads the
  // metrics in the order they were registered, so the readers come first.
  new Gauge({
    name: "nodejs_eventloop_lag_max_seconds",
    help: "Largest event-loop delay since the last scrape.",
    registers,
    collect() {
      if (delay.count === 0) return;
      this.set(delay.max / 1e9);
      lagStatistics.min.set(delay.min / 1e9);
      lagStatistics.mean.set(delay.mean / 1e9);
      lagStatistics.p50.set(delay.percentile(50) / 1e9);
      lagStatistics.p90.set(delay.percentile(90) / 1e9);
      lagStatistics.p99.set(delay.percentile(99) / 1e9);
      delay.reset();
    },
  });
  const lag = (name: string, help: string) => new Gauge({ name, help, registers });
  const lagStatistics = {
    min: lag("nodejs_eventloop_lag_min_seconds", "Smallest event-loop delay since the last scrape."),
    mean: lag("nodejs_eventloop_lag_mean_seconds", "Mean event-loop delay since the last scrape."),
    p50: lag("nodejs_eventloop_lag_p50_seconds", "Median event-loop delay since the last scrape."),
    p90: lag(
      "nodejs_eventloop_lag_p90_seconds",
      "90th percentile of the event-loop delay since the last scrape.",
    ),
    p99: lag(
      "nodejs_eventloop_lag_p99_seconds",
      "99th percentile of the event-loop delay since the last scrape.",
    ),
  };
  registerMemoryMetrics(registers);
  registerCpuMetrics(registers);
  new Gauge({
    name: "process_start_time_seconds",
    help: "When the process started, in seconds since the Unix epoch.",
    registers,
  }).set(performance.timeOrigin / 1000);
  return { stop: () => delay.disable() };
}

function registerMemoryMetrics(registers: Registry[]): void {
  new Gauge({
    name: "nodejs_heap_size_total_bytes",
    help: "V8 heap allocated, in bytes.",
    registers,
    collect() {
      const memory = process.memoryUsage();
      this.set(memory.heapTotal);
      heapUsed.set(memory.heapUsed);
      external.set(memory.external);
      resident.set(memory.rss);
    },
  });
  const heapUsed = new Gauge({
    name: "nodejs_heap_size_used_bytes",
    help: "V8 heap in use, in bytes.",
    registers,
  });
  const external = new Gauge({
    name: "nodejs_external_memory_bytes",
    help: "Memory of C++ objects bound to JavaScript objects, in bytes.",
    registers,
  });
  const resident = new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory of the process, in bytes.",
    registers,
  });
}

function registerCpuMetrics(registers: Registry[]): void {
  // From zero: the first scrape reports the process's whole CPU time so far.
  let last: NodeJS.CpuUsage = { user: 0, system: 0 };
  new Counter({
    name: "process_cpu_seconds_total",
    help: "User and system CPU time of the process, in seconds.",
    registers,
    collect() {
      const now = process.cpuUsage();
      const userSeconds = (now.user - last.user) / 1e6;
      const systemSeconds = (now.system - last.system) / 1e6;
      last = now;
      user.inc(userSeconds);
      system.inc(systemSeconds);
      this.inc(userSeconds + systemSeconds);
    },
  });
  const user = new Counter({
    name: "process_cpu_user_seconds_total",
    help: "User CPU time of the process, in seconds.",
    registers,
  });
  const system = new Counter({
    name: "process_cpu_system_seconds_total",
    help: "System CPU time of the process, in seconds.",
    registers,
  });
}
