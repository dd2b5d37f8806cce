export type * from "./request.js";
export type * from "./stream.js";
export * from "./result.js";
