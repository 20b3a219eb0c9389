export * from "./client.js";
export * from "./errors.js";
export { BINARY_VARIABLE, findBinary } from "./binary.js";
export * from "./generated/protocol.js";
