/** What `install` patched (or found already routed through bson-rs by an npm override). */
export interface InstallInfo {
  readonly mongodbDir: string;
  readonly mongodbVersion: string;
  readonly bsonFile: string;
  readonly bsonVersion: string;
  readonly viaOverride: boolean;
  /** False when bson-rs has no native addon and runs js-bson's own codec functions (see `bson-rs/native`). */
  readonly native: boolean;
}

/** Routes the given driver's (`require('mongodb')`) codec through bson-rs. Installing twice is harmless. */
export function install(mongodb: object): InstallInfo;
/** Restores js-bson in the given driver, or in every driver installed into. True if anything was restored. */
export function uninstall(mongodb?: object): boolean;
/** Whether the given driver's bson copy currently routes through bson-rs. */
export function isInstalled(mongodb: object): boolean;
/** The bson module object (js-bson copy) the given driver loaded. */
export function driverBson(mongodb: object): typeof import('bson');
export const CODEC_NAMES: readonly string[];
export const SUPPORTED_BSON_MAJORS: readonly number[];
