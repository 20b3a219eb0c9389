export * from "./client.js";
export * from "./errors.js";
export * from "./builders.js";
export { ServerLog } from "./server-log.js";
export {
  BINARY_VARIABLE,
  BinaryNotFoundError,
  findBinary,
  locateBinary,
  type BinarySource,
  type FoundBinary,
} from "./binary.js";
export { PLATFORMS, PLATFORM_SCOPE, currentPlatform, currentPlatformName, type Platform } from "./platforms.js";
export * from "./generated/protocol.js";
