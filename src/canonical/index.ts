export type * from "./request.js";
export * from "./result.js";
export type * from "./server-tool.js";
export type * from "./stream.js";
export * from "./text-pieces.js";
