/** The global Mongoose plug-in: `mongoose.plugin(require('bson-rs/mongoose'))`. */
declare function bsonRs(schema: object): void;
declare namespace bsonRs {
  /**
   * Turns the plug-in on and installs into the driver of `mongoose` (default: the one resolvable from the cwd).
   * Returns what bson-rs/driver's install() returned (`native: false`: bson-rs runs js-bson's own codec).
   */
  function install(mongoose?: object): import('./driver').InstallInfo;
  /** Turns the plug-in off and restores js-bson in every driver it installed into. */
  function uninstall(): boolean;
  /** Whether bson-rs is installed into the driver of the given mongoose (instance or schema). */
  function isInstalled(mongoose: object): boolean;
}
export = bsonRs;
