/**
 * prom-client's registry and metric classes, each required from its own module. The package's
 * entry module also loads its default-metrics module, which loads `@opentelemetry/api`; with
 * tracing off the gateway loads no OpenTelemetry module at all, so the classes are taken from
 * their files (the version is pinned) and the process metrics come from runtime-metrics.ts.
 */
import { createRequire } from "node:module";
import type * as PromClient from "prom-client";

const require = createRequire(import.meta.url);

export const Registry = require("prom-client/lib/registry") as typeof PromClient.Registry;
export const Counter = require("prom-client/lib/counter") as typeof PromClient.Counter;
export const Gauge = require("prom-client/lib/gauge") as typeof PromClient.Gauge;
export const Histogram = require("prom-client/lib/histogram") as typeof PromClient.Histogram;

export type Registry = PromClient.Registry;
export type Counter<Label extends string> = PromClient.Counter<Label>;
export type Gauge<Label extends string> = PromClient.Gauge<Label>;
export type Histogram<Label extends string> = PromClient.Histogram<Label>;
